package service

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"testing"
)

// naiveEncode is the obviously-right encoder the real one must agree
// with: nothing if no report is known, else the marker and every report
// that is not 0%.
func naiveEncode(rs []Report) []byte {
	known := false
	for _, r := range rs {
		known = known || r.Known()
	}
	if !known {
		return nil
	}
	out := []byte{0}
	next := 0
	for i, r := range rs {
		if r == 0 {
			continue
		}
		if r == Unknown {
			out = binary.AppendUvarint(out, uint64(i-next)<<1|1)
		} else {
			out = append(binary.AppendUvarint(out, uint64(i-next)<<1), byte(r))
		}
		next = i + 1
	}
	return out
}

func randomReports(rng *rand.Rand, n int) []Report {
	rs := make([]Report, n)
	unknownPct, ratedPct := rng.IntN(101), rng.IntN(101)
	for i := range rs {
		switch x := rng.IntN(100); {
		case x < unknownPct:
			rs[i] = Unknown
		case x < unknownPct+ratedPct:
			rs[i] = Report(1 + rng.IntN(int(MaxRate)))
		}
	}
	return rs
}

func TestEncodeAgreesWithTheNaiveEncoderAndRoundTrips(t *testing.T) {
	rng := rand.New(rand.NewPCG(24, 1))
	for trial := 0; trial < 3000; trial++ {
		n := rng.IntN(600)
		rs := Clamp(randomReports(rng, n))
		bz, err := Encode(rs)
		if err != nil {
			t.Fatalf("trial %d: %v", trial, err)
		}
		if want := naiveEncode(rs); !bytes.Equal(bz, want) {
			t.Fatalf("trial %d: Encode %x, naive %x", trial, bz, want)
		}
		if len(bz) > MaxLen(n) {
			t.Fatalf("trial %d: %d bytes over MaxLen(%d) = %d", trial, len(bz), n, MaxLen(n))
		}
		got, err := Decode(bz, n)
		if err != nil {
			t.Fatalf("trial %d: decode %x: %v", trial, bz, err)
		}
		for i := range rs {
			if got[i] != rs[i] {
				t.Fatalf("trial %d: executor %d decoded %s, encoded %s", trial, i, got[i], rs[i])
			}
		}
	}
}

func TestEncodeSizes(t *testing.T) {
	for _, tc := range []struct {
		name string
		rs   []Report
		want []byte
	}{
		{"empty group", nil, nil},
		{"all unknown is the empty string", []Report{Unknown, Unknown}, nil},
		{"all 0% is the marker alone", []Report{0, 0, 0}, []byte{0}},
		{"one rate", []Report{0, 28, 0}, []byte{0, 2, 28}},
		{"unknown then rate", []Report{Unknown, 0, 100}, []byte{0, 1, 2, 100}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Encode(tc.rs)
			if err != nil || !bytes.Equal(got, tc.want) {
				t.Fatalf("Encode = %x, %v; want %x", got, err, tc.want)
			}
		})
	}
	if _, err := Encode([]Report{101}); err == nil {
		t.Fatal("a rate above 100% encoded")
	}
}

// Each input names the attack or mistake it stands for.
func TestCheckRejectsAttacks(t *testing.T) {
	huge := binary.AppendUvarint([]byte{0}, 1<<62)
	for _, tc := range []struct {
		name string
		bz   []byte
		n    int
		want error
	}{
		{"oversized: longer than the bound before any parsing", bytes.Repeat([]byte{0}, MaxLen(3)+1), 3, ErrOversized},
		{"wrong marker", []byte{1}, 3, ErrMalformed},
		{"all unknown written with the marker: a second encoding", []byte{0, 1, 1}, 2, ErrNonCanonical},
		{"zero rate as an exception: a second encoding of 0%", []byte{0, 0, 0}, 2, ErrMalformed},
		{"rate above 100%", []byte{0, 0, 101}, 2, ErrMalformed},
		{"truncated: rate byte missing", []byte{0, 0}, 2, ErrMalformed},
		{"non-minimal varint", []byte{0, 0x80, 0x00, 5}, 2, ErrMalformed},
		{"index past the group", []byte{0, 4, 5}, 2, ErrMalformed},
		{"huge gap", huge, 100, ErrMalformed},
		{"more exceptions than MaxExceptions", append([]byte{0}, bytes.Repeat([]byte{0, 5}, MaxExceptions+1)...), 2 * MaxExceptions, ErrOversized},
		{"exception after the last executor", []byte{0, 2, 5, 2, 5}, 3, ErrMalformed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := Check(tc.bz, tc.n); !errors.Is(err, tc.want) {
				t.Fatalf("Check(%x, %d) = %v, want %v", tc.bz, tc.n, err, tc.want)
			}
		})
	}
}

func TestRate(t *testing.T) {
	for _, tc := range []struct {
		misses, total int
		want          Report
	}{
		{0, 16, 0}, {1, 16, 6}, {4, 16, 25}, {16, 16, 100}, {0, 0, Unknown}, {3, 2, Unknown}, {-1, 4, Unknown},
	} {
		if got := Rate(tc.misses, tc.total); got != tc.want {
			t.Errorf("Rate(%d, %d) = %s, want %s", tc.misses, tc.total, got, tc.want)
		}
	}
}

// FuzzDecode: whatever Check accepts decodes to a list whose encoding is
// the input, and nothing panics.
func FuzzDecode(f *testing.F) {
	f.Add([]byte{0, 2, 28}, uint16(3))
	f.Add([]byte{0, 1, 2, 100}, uint16(3))
	f.Add([]byte{}, uint16(4))
	f.Add([]byte{0}, uint16(1))
	f.Fuzz(func(t *testing.T, bz []byte, n16 uint16) {
		n := int(n16 % 2048)
		rs, err := Decode(bz, n)
		if err != nil {
			return
		}
		again, err := Encode(rs)
		if err != nil || !bytes.Equal(again, bz) {
			t.Fatalf("accepted %x (n=%d) re-encodes as %x, %v", bz, n, again, err)
		}
	})
}

// FuzzNextShortAgrees: the inlined reader of Each's common exceptions
// reads what NextException reads whenever it reads anything, so Each
// accepts and visits exactly what it did before it had a fast path.
func FuzzNextShortAgrees(f *testing.F) {
	f.Add([]byte{0x02, 28}, 0, 3)
	f.Add([]byte{0x81, 0x01, 5}, 0, 300)
	f.Add([]byte{0x80, 0x00, 5}, 0, 300)
	f.Add([]byte{0x03}, 2, 4)
	f.Fuzz(func(t *testing.T, bz []byte, next, n int) {
		if len(bz) == 0 || next < 0 || n <= next || n > 1<<20 {
			return
		}
		i, r, rest, ok := nextShort(bz, next, n)
		if !ok {
			return
		}
		wi, wr, wrest, err := NextException(bz, next, n)
		if err != nil || i != wi || r != wr || !bytes.Equal(rest, wrest) || len(rest) != len(wrest) {
			t.Fatalf("nextShort(%x, %d, %d) = %d %s %x, NextException = %d %s %x %v", bz, next, n, i, r, rest, wi, wr, wrest, err)
		}
	})
}
