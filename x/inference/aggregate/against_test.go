package aggregate

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/inferenced/inferenced/x/inference/verdict"
)

// TestPackedAgainstEqualsPackedOfTheAbsoluteLists: on random commits
// (TestDifferentialEqualsLegacy's generator, corrupted lists among them)
// and random references, tallying each list made relative to the
// reference gives exactly the samples, or the error, of tallying the
// absolute lists; a nil reference is Packed itself; a reference that is
// not a packing of the group is refused (attacks named: a value 3, the
// wrong length, padding).
func TestPackedAgainstEqualsPackedOfTheAbsoluteLists(t *testing.T) {
	rng := rand.New(rand.NewPCG(25, 3))
	for run := range 3000 {
		n := rng.IntN(300)
		if run%300 == 0 {
			n = 10000
		}
		votes := randomCommit(t, rng, n)
		corrupted := rng.IntN(5) == 0
		if corrupted {
			corrupt(rng, votes, n)
		}
		ref := randomRef(rng, n)
		relative := make([]Vote, len(votes))
		for i, v := range votes {
			relative[i] = v
			if v.Abstain || corrupted {
				continue // a corrupted commit is compared as it is, with no reference
			}
			packed, err := verdict.Expand(v.Verdicts, n)
			if err != nil {
				packed = v.Verdicts // a direct caller's packing
			}
			rel, err := verdict.Relative(packed, ref, n)
			if err != nil {
				t.Fatal(err)
			}
			if relative[i].Verdicts, err = verdict.Compact(rel, n); err != nil {
				t.Fatal(err)
			}
		}
		if corrupted {
			ref = nil
		}
		want, wantErr := Packed(votes, n)
		got, err := PackedAgainst(relative, n, ref)
		if fmt.Sprint(err) != fmt.Sprint(wantErr) || !bytes.Equal(got, want) {
			t.Fatalf("run %d, n=%d: %x (%v), absolute %x (%v)", run, n, got, err, want, wantErr)
		}
	}
	for name, ref := range map[string][]byte{"value 3": {0xff}, "wrong length": {0x55, 0x55}, "padding": {0x55 | 0xc0}} {
		if _, err := PackedAgainst(nil, 3, ref); err == nil {
			t.Fatalf("%s in the reference accepted", name)
		}
	}
}

func randomRef(rng *rand.Rand, n int) []byte {
	if rng.IntN(6) == 0 {
		return nil
	}
	vs := make([]verdict.Verdict, n)
	share := rng.IntN(100)
	for i := range vs {
		vs[i] = verdict.OK
		if rng.IntN(100) < share {
			vs[i] = verdict.Verdict(rng.IntN(3))
		}
	}
	p, _ := verdict.Pack(vs)
	return p
}

// FuzzPackedAgainst: for any reference and three lists cut from the same
// bytes, tallying the lists made relative to the reference gives the
// samples of tallying them as they are, and the same refusals.
func FuzzPackedAgainst(f *testing.F) {
	f.Add([]byte{0x5a, 0x66, 0x19, 0x55, 0x41, 0x12}, []byte{0x59, 0x52}, int64(3), int64(5), int64(1), 6, uint16(2), uint16(4))
	f.Add(bytesOf(0x55, 30), bytesOf(0x55, 10), int64(1), int64(1), int64(1), 40, uint16(10), uint16(20))
	f.Fuzz(func(t *testing.T, raw, ref []byte, p1, p2, p3 int64, n int, cut1, cut2 uint16) {
		if n < 0 || n > 200 || verdict.Check(ref, n) != nil {
			return
		}
		a, b := min(int(cut1), len(raw)), min(int(cut2), len(raw))
		if a > b {
			a, b = b, a
		}
		var absolute, relative []Vote
		converted := true
		for i, part := range [][]byte{raw[:a], raw[a:b], raw[b:]} {
			v := Vote{Power: []int64{p1, p2, p3}[i], Verdicts: part}
			absolute = append(absolute, v)
			// Either compact form: expanded, made relative; a list that is
			// neither stays as it is, and both tallies refuse it.
			packed := part
			if verdict.IsSparse(part, n) {
				if x, err := verdict.Expand(part, n); err == nil {
					packed = x
				}
			}
			if rel, err := verdict.Relative(packed, ref, n); err == nil {
				v.Verdicts = rel
			} else {
				converted = false
			}
			relative = append(relative, v)
		}
		want, wantErr := Packed(absolute, n)
		if wantErr == nil && !converted {
			return // a list the tally reads but is not canonical: no relative form to compare
		}
		got, err := PackedAgainst(relative, n, ref)
		if (err == nil) != (wantErr == nil) || !bytes.Equal(got, want) {
			t.Fatalf("n=%d ref %x: %x (%v), absolute %x (%v)", n, ref, got, err, want, wantErr)
		}
	})
}
