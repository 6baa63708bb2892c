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
