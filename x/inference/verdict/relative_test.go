package verdict

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// TestRotationIsABijectionThatMakesTheReferenceOK: for every reference
// value, RelativeOf maps the reference itself to OK and the three values
// onto the three values, and AbsoluteOf undoes it.
func TestRotationIsABijectionThatMakesTheReferenceOK(t *testing.T) {
	for _, r := range []Verdict{Unknown, OK, Miss} {
		if got := RelativeOf(r, r); got != OK {
			t.Fatalf("reference %s reads %s relative to itself, want ok", r, got)
		}
		seen := map[Verdict]bool{}
		for _, v := range []Verdict{Unknown, OK, Miss} {
			rel := RelativeOf(v, r)
			if rel > Miss || seen[rel] {
				t.Fatalf("reference %s: %s reads %s, not a bijection onto the valid values", r, v, rel)
			}
			seen[rel] = true
			if back := AbsoluteOf(rel, r); back != v {
				t.Fatalf("reference %s: %s -> %s -> %s", r, v, rel, back)
			}
		}
	}
	if RelativeOf(Miss, OK) != Miss || RelativeOf(Unknown, OK) != Unknown {
		t.Fatal("against ok, verdicts are themselves")
	}
}

// TestRelativeRoundTripsAndIsCompactWhereItAgrees: on random packings and
// references (nil among them), Absolute(Relative(x)) is x; relative to
// itself a list is all OK, its compact form empty; and both refuse
// invalid packings and references (attacks named: a value 3, padding).
func TestRelativeRoundTripsAndIsCompactWhereItAgrees(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 25))
	for c := range 2000 {
		n := r.IntN(200)
		x, ref := randomPacking(r, n), randomPacking(r, n)
		if c%5 == 0 {
			ref = nil
		}
		rel, err := Relative(x, ref, n)
		if err != nil {
			t.Fatal(err)
		}
		back, err := Absolute(rel, ref, n)
		if err != nil || !bytes.Equal(back, x) {
			t.Fatalf("n=%d: %x -> %x -> %x (%v)", n, x, rel, back, err)
		}
		if ref == nil && !bytes.Equal(rel, x) {
			t.Fatalf("n=%d: relative to nothing changed the list", n)
		}
		self, err := Relative(x, x, n)
		if err != nil {
			t.Fatal(err)
		}
		if compact, err := Compact(self, n); err != nil || len(compact) != 0 {
			t.Fatalf("n=%d: a list relative to itself compacts to %x (%v), want nothing", n, compact, err)
		}
	}
	bad := []byte{0xff}
	if _, err := Relative(bad, nil, 4); err == nil {
		t.Fatal("value 3 in the verdicts accepted")
	}
	if _, err := Relative([]byte{0x55}, bad, 4); err == nil {
		t.Fatal("value 3 in the reference accepted")
	}
	if _, err := Absolute([]byte{0x55}, []byte{0x55 | 0x80}, 3); err == nil {
		t.Fatal("padding in the reference accepted")
	}
}

func randomPacking(r *rand.Rand, n int) []byte {
	vs := make([]Verdict, n)
	for i := range vs {
		vs[i] = Verdict(r.IntN(3))
	}
	p, _ := Pack(vs)
	return p
}
