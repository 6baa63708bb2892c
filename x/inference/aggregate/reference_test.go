package aggregate

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/inferenced/inferenced/x/inference/verdict"
)

// referenceAggregate is Aggregate as it was before extensions carried the
// compact form: packed verdicts only, an empty list abstains, one
// per-executor count. The new tally must give the same samples.
func referenceAggregate(votes []Vote, n int) []Sample {
	var total uint64
	ok, miss := make([]uint64, n), make([]uint64, n)
	for _, v := range votes {
		total += uint64(v.Power)
		if len(v.Verdicts) == 0 {
			continue
		}
		for i := 0; i < n; i++ {
			switch verdict.At(v.Verdicts, i) {
			case verdict.OK:
				ok[i] += uint64(v.Power)
			case verdict.Miss:
				miss[i] += uint64(v.Power)
			}
		}
	}
	out := make([]Sample, 0, n)
	for i := 0; i < n; i++ {
		switch {
		case 2*miss[i] > total:
			out = append(out, Sample{Index: i, Miss: true})
		case 2*ok[i] > total:
			out = append(out, Sample{Index: i})
		}
	}
	return out
}

// TestPropertyCompactTallyEqualsTheReference: random commits whose votes
// mix sparse and packed lists (canonical forms, as extensions carry them),
// duplicates and abstentions; the samples equal the reference's over the
// same lists packed.
func TestPropertyCompactTallyEqualsTheReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(12, 7))
	for run := range 2000 {
		n := rng.IntN(300)
		nVals := 1 + rng.IntN(40)
		density := rng.IntN(60)
		var votes, ref []Vote
		var shared []verdict.Verdict
		for range nVals {
			p := 1 + rng.Int64N(1000)
			if rng.IntN(8) == 0 {
				votes = append(votes, Vote{Power: p, Abstain: true})
				ref = append(ref, Vote{Power: p})
				continue
			}
			vs := make([]verdict.Verdict, n)
			for i := range vs {
				vs[i] = verdict.OK
				if rng.IntN(100) < density {
					vs[i] = verdict.Verdict(rng.IntN(3))
				}
			}
			if shared != nil && rng.IntN(2) == 0 {
				vs = slices.Clone(shared) // validators that agree
			}
			shared = vs
			packed := pack(t, vs...)
			if n == 0 {
				packed = []byte{0} // the reference needs a non-empty list; no executor reads it
			}
			votes = append(votes, Vote{Power: p, Verdicts: compact(t, vs...)})
			ref = append(ref, Vote{Power: p, Verdicts: packed})
		}
		got, err := Aggregate(votes, n)
		if err != nil {
			t.Fatalf("run %d: %v", run, err)
		}
		want := referenceAggregate(ref, n)
		if !slices.Equal(got, want) {
			t.Fatalf("run %d (n=%d): %v, reference %v", run, n, got, want)
		}
		packed, err := Packed(votes, n)
		wantPacked, _ := packSamples(want, n)
		if err != nil || !slices.Equal(packed, wantPacked) {
			t.Fatalf("run %d (n=%d): Packed %x (%v), want %x", run, n, packed, err, wantPacked)
		}
	}
}

// packSamples encodes samples for a group of n as packed verdicts (no sample is
// unknown), the form a health bundle carries.
func packSamples(samples []Sample, n int) ([]byte, error) {
	vs := make([]verdict.Verdict, n)
	for _, s := range samples {
		if s.Index < 0 || s.Index >= n {
			return nil, fmt.Errorf("sample for executor %d outside a group of %d", s.Index, n)
		}
		vs[s.Index] = verdict.OK
		if s.Miss {
			vs[s.Index] = verdict.Miss
		}
	}
	return verdict.Pack(vs)
}
