package verdict

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// naiveCompact is the obviously-right canonical encoder the real one must
// agree with: build both forms from the list, keep the sparse one only if
// strictly shorter.
func naiveCompact(vs []Verdict) []byte {
	packed, _ := Pack(vs)
	var sparse []byte
	next := 0
	for i, v := range vs {
		if v == OK {
			continue
		}
		c := uint64(i-next) << 1
		if v == Miss {
			c |= 1
		}
		sparse = binary.AppendUvarint(sparse, c)
		next = i + 1
	}
	if len(sparse) < len(packed) {
		return sparse
	}
	return packed
}

func list(n int, at map[int]Verdict) []Verdict {
	vs := make([]Verdict, n)
	for i := range vs {
		vs[i] = OK
	}
	for i, v := range at {
		vs[i] = v
	}
	return vs
}

func TestCompactForms(t *testing.T) {
	cases := []struct {
		name string
		vs   []Verdict
		want []byte
	}{
		{"empty group", nil, []byte{}},
		{"all ok is the empty string", list(1000, nil), []byte{}},
		{"one miss first", list(8, map[int]Verdict{0: Miss}), []byte{0x01}},
		{"one unknown after three oks", list(8, map[int]Verdict{3: Unknown}), []byte{0x06}},
		{"adjacent exceptions have gap 0", list(12, map[int]Verdict{4: Miss, 5: Unknown}), []byte{0x09, 0x00}},
		{"a gap of 64 takes two bytes", list(100, map[int]Verdict{64: Miss}), []byte{0x81, 0x01}},
		// 4 executors: packing 1 byte, one exception 1 byte: a tie goes to packed.
		{"tie goes to packed", list(4, map[int]Verdict{1: Miss}), []byte{0x01 | 0x08 | 0x10 | 0x40}},
		{"all unknown stays packed", make([]Verdict, 40), make([]byte, 10)},
	}
	for _, c := range cases {
		packed, err := Pack(c.vs)
		if err != nil {
			t.Fatal(err)
		}
		got, err := Compact(packed, len(c.vs))
		if err != nil || !bytes.Equal(got, c.want) || !bytes.Equal(got, naiveCompact(c.vs)) {
			t.Errorf("%s: %x (%v), want %x", c.name, got, err, c.want)
			continue
		}
		back, err := Expand(got, len(c.vs))
		if err != nil || !bytes.Equal(back, packed) {
			t.Errorf("%s: expands to %x (%v), want %x", c.name, back, err, packed)
		}
	}
}

// One named case per attack on the decoder.
func TestExpandRejectsAttacks(t *testing.T) {
	okPacked, _ := Pack(list(8, nil))
	cases := []struct {
		name string
		bz   []byte
		n    int
		want error
	}{
		{"oversized: longer than the packing", make([]byte, 3), 8, ErrOversized},
		{"non-canonical choice: packed although sparse is shorter", okPacked, 8, ErrNonCanonical},
		{"index out of range", []byte{0x10}, 8, ErrSparse},                     // gap 8 in a list of 8
		{"index out of range after others", []byte{0x0b, 0x0c}, 12, ErrSparse}, // 5, then 12
		{"truncated varint", []byte{0x81}, 400, ErrSparse},
		{"non-minimal varint", []byte{0x81, 0x00}, 400, ErrSparse},
		{"huge gap does not wrap around", []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}, 400, ErrSparse},
		{"varint overflow", bytes.Repeat([]byte{0xff}, 11), 400, ErrSparse},
		{"packed with value 3", []byte{0xff, 0xff}, 8, ErrNonCanonical},
		{"negative group", nil, -1, ErrLength},
	}
	for _, c := range cases {
		_, err := Expand(c.bz, c.n)
		if err == nil || (c.want != ErrNonCanonical && !errors.Is(err, c.want)) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
		if CheckCompact(c.bz, c.n) == nil {
			t.Errorf("%s: CheckCompact accepted %x", c.name, c.bz)
		}
	}
	// Duplicate or decreasing indices cannot be written: each gap counts
	// from the index after the previous exception, so 0x01 0x01 is 0 then 1.
	got, err := Expand([]byte{0x01, 0x01}, 40)
	if err != nil || At(got, 0) != Miss || At(got, 1) != Miss || At(got, 2) != OK {
		t.Errorf("adjacent exceptions: %x %v", got, err)
	}
	// checkEither reads a packing that is not the canonical choice (what
	// the tally needs), never anything else.
	if err := checkEither(okPacked, 8); err != nil {
		t.Errorf("checkEither of a valid packing: %v", err)
	}
	if err := checkEither([]byte{0x10}, 8); !errors.Is(err, ErrSparse) {
		t.Errorf("checkEither out of range: %v", err)
	}
}

func TestCompactAgreesWithTheNaiveEncoderOnRandomLists(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 3000 {
		n := r.IntN(300)
		vs := randomList(r, n)
		packed, _ := Pack(vs)
		got, err := Compact(packed, n)
		if err != nil || !bytes.Equal(got, naiveCompact(vs)) {
			t.Fatalf("n=%d: %x (%v), naive %x", n, got, err, naiveCompact(vs))
		}
		if err := CheckCompact(got, n); err != nil {
			t.Fatalf("n=%d: own output %x refused: %v", n, got, err)
		}
		want := 0
		for _, v := range vs {
			if v != OK {
				want++
			}
		}
		if c, valid := countExceptions(packed, n); c != want || !valid {
			t.Fatalf("n=%d: %d exceptions counted (valid %v), %d in the list", n, c, valid, want)
		}
		back, err := Expand(got, n)
		if err != nil || !bytes.Equal(back, packed) {
			t.Fatalf("n=%d: %x expands to %x, want %x", n, got, back, packed)
		}
	}
}

// FuzzExpand: never panics; never reads more than the packing; whatever it
// accepts is the canonical encoding of what it expands to.
func FuzzExpand(f *testing.F) {
	f.Add([]byte{}, 8)
	f.Add([]byte{0x01, 0x00}, 12)
	f.Add([]byte{0x55, 0x55}, 8)
	f.Add([]byte{0x81, 0x00}, 400)
	f.Fuzz(func(t *testing.T, bz []byte, n int) {
		if n > 1<<16 {
			return
		}
		packed, err := Expand(bz, n)
		if (err == nil) != (CheckCompact(bz, n) == nil) {
			t.Fatalf("%x (n=%d): Expand and CheckCompact disagree: %v", bz, n, err)
		}
		if err != nil {
			return
		}
		if len(bz) > PackedLen(n) || len(packed) != PackedLen(n) {
			t.Fatalf("%x (n=%d): %d bytes in, %d out", bz, n, len(bz), len(packed))
		}
		vs, err := Unpack(packed, n)
		if err != nil {
			t.Fatalf("%x (n=%d): expanded to an invalid packing: %v", bz, n, err)
		}
		if again := naiveCompact(vs); !bytes.Equal(again, bz) {
			t.Fatalf("%x (n=%d) accepted but the canonical encoding is %x", bz, n, again)
		}
	})
}

// randomList is n verdicts, each an exception (any value) with a
// probability drawn for the list.
func randomList(r *rand.Rand, n int) []Verdict {
	vs := make([]Verdict, n)
	density := r.IntN(100)
	for i := range vs {
		vs[i] = OK
		if r.IntN(100) < density {
			vs[i] = Verdict(r.IntN(3))
		}
	}
	return vs
}

// legacyCheckCompact is CheckCompact before the packing's validity and
// its exceptions were read in one pass (commit 53b7d40), verbatim but for
// the count, done naively.
func legacyCheckCompact(bz []byte, n int) error {
	if err := checkEither(bz, n); err != nil {
		return err
	}
	if !IsSparse(bz, n) {
		count := 0
		for i := range n {
			if At(bz, i) != OK {
				count++
			}
		}
		if count < len(bz) && sparseLen(bz, n, len(bz)) < len(bz) {
			return ErrNonCanonical
		}
	}
	return nil
}

// TestCheckCompactEqualsLegacy: the same answer and the same words as the
// two-pass check on canonical lists of either form, packings that should
// be sparse, and their corruptions (attacks named: a verdict of value 3
// smuggled in, padding set, a byte changed, a list cut or grown by a
// byte, a negative group size).
func TestCheckCompactEqualsLegacy(t *testing.T) {
	r := rand.New(rand.NewPCG(53, 7))
	for c := range 20000 {
		n := r.IntN(300)
		if c%10 == 0 {
			n = -r.IntN(3)
		}
		vs := randomList(r, max(n, 0))
		packed, _ := Pack(vs)
		bz := packed
		if r.IntN(2) == 0 {
			bz, _ = Compact(packed, len(vs))
		}
		bz = slices.Clone(bz)
		attack := "none"
		switch k := r.IntN(6); {
		case k == 0 && len(vs) > 0:
			attack, bz = "value 3 smuggled in", packed
			i := r.IntN(len(vs))
			bz[i/4] |= 3 << (2 * (i % 4))
		case k == 1 && len(vs)%4 != 0:
			attack, bz = "padding set", packed
			bz[len(bz)-1] |= 0x80
		case k == 2 && len(bz) > 0:
			attack = "a byte changed"
			bz[r.IntN(len(bz))] = byte(r.IntN(256))
		case k == 3 && len(bz) > 0:
			attack, bz = "cut by a byte", bz[:len(bz)-1]
		case k == 4:
			attack, bz = "grown by a byte", append(bz, byte(r.IntN(256)))
		}
		got, want := CheckCompact(bz, n), legacyCheckCompact(bz, n)
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("case %d (%s): %x, n=%d: %v, legacy %v", c, attack, bz, n, got, want)
		}
	}
}

func BenchmarkCompact(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		vs := list(n, map[int]Verdict{n / 2: Miss, n / 3: Unknown})
		packed, _ := Pack(vs)
		b.Run("encode", func(b *testing.B) {
			for b.Loop() {
				if _, err := Compact(packed, n); err != nil {
					b.Fatal(err)
				}
			}
		})
		all, _ := Pack(list(n, nil))
		b.Run("check-packed-all-ok-refused", func(b *testing.B) {
			for b.Loop() {
				if CheckCompact(all, n) == nil {
					b.Fatal("accepted")
				}
			}
		})
	}
}
