package verdict

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

func TestPackLayoutAndRoundTrip(t *testing.T) {
	vs := []Verdict{OK, Miss, Unknown, OK, Miss}
	packed, err := Pack(vs)
	if err != nil {
		t.Fatal(err)
	}
	// byte 0: ok(1) | miss(2)<<2 | unknown<<4 | ok(1)<<6; byte 1: miss(2)
	if want := []byte{0x01 | 0x08 | 0x40, 0x02}; !bytes.Equal(packed, want) {
		t.Fatalf("packed %x, want %x", packed, want)
	}
	got, err := Unpack(packed, len(vs))
	if err != nil {
		t.Fatal(err)
	}
	for i := range vs {
		if got[i] != vs[i] {
			t.Fatalf("verdict %d: %s, want %s", i, got[i], vs[i])
		}
	}
}

func TestPackRefusesInvalid(t *testing.T) {
	if _, err := Pack([]Verdict{OK, invalid}); err == nil {
		t.Fatal("packed an invalid verdict")
	}
}

func TestCheckRejects(t *testing.T) {
	cases := []struct {
		name   string
		packed []byte
		n      int
	}{
		{"too short", []byte{0x01}, 5},
		{"too long", []byte{0x01, 0x00}, 4},
		{"empty for one executor", nil, 1},
		{"value 3", []byte{0x03}, 1},
		{"value 3 in the middle", []byte{0x01, 0x0c}, 6},
		{"padding bits set", []byte{0x01 | 0x40}, 3},
		{"negative count", nil, -1},
	}
	for _, c := range cases {
		if err := Check(c.packed, c.n); err == nil {
			t.Errorf("%s: accepted %x for %d executors", c.name, c.packed, c.n)
		}
	}
	if err := Check(nil, 0); err != nil {
		t.Errorf("empty group: %v", err)
	}
}

func TestPackedLenAtTheBudgetSizes(t *testing.T) {
	if PackedLen(1000) != 250 || PackedLen(10000) != 2500 || PackedLen(1) != 1 || PackedLen(0) != 0 {
		t.Fatal("two bits per executor")
	}
}

// FuzzUnpack: Check never panics, and what it accepts packs back to the
// same bytes (one encoding per verdict list).
func FuzzUnpack(f *testing.F) {
	f.Add([]byte{0x49, 0x02}, 5)
	f.Add([]byte{0xff}, 4)
	f.Add([]byte{}, 0)
	f.Fuzz(func(t *testing.T, packed []byte, n int) {
		if n > 1<<16 {
			return
		}
		vs, err := Unpack(packed, n)
		if err != nil {
			return
		}
		again, err := Pack(vs)
		if err != nil || !bytes.Equal(again, packed) {
			t.Fatalf("%x accepted for %d but re-packs to %x (%v)", packed, n, again, err)
		}
	})
}

// The eight-bytes-at-a-time scan must find a value 3 wherever it sits: in a
// full word, in the tail, or at a word's edge, and name the right executor.
func TestCheckFindsAnInvalidValueAtEveryPosition(t *testing.T) {
	for n := 1; n <= 70; n++ {
		for i := 0; i < n; i++ {
			vs := make([]Verdict, n)
			for j := range vs {
				vs[j] = Verdict(1 + j%2)
			}
			packed, err := Pack(vs)
			if err != nil {
				t.Fatal(err)
			}
			if err := Check(packed, n); err != nil {
				t.Fatalf("n=%d: valid packing refused: %v", n, err)
			}
			packed[i/4] |= 3 << (2 * (i % 4))
			err = Check(packed, n)
			if want := fmt.Sprintf("executor %d:", i); err == nil || !strings.Contains(err.Error(), want) {
				t.Fatalf("n=%d, value 3 at %d: got %v, want %q", n, i, err, want)
			}
		}
	}
}
