package types_test

import (
	"math/rand/v2"
	"testing"

	"github.com/inferenced/inferenced/x/inference/types"
)

// P3: an honest agent is never stopped at gonka's 3.25% baseline miss rate.
// Simulates whole epochs of an agent's traffic under the default allowance
// (10 + 20% of its finished inferences), charging it for every miss (as if
// no attestation ever backed one: the worst case) and checking the rule
// after each inference, as the chain does.
func TestHonestAgentAtBaselineIsNeverStopped(t *testing.T) {
	p := types.DefaultParams()
	const epochs, perEpoch = 1000, 5000
	cases := []struct {
		rateBasisPoints int
		stoppedEvery    bool // false: never stopped; true: stopped in every epoch
	}{
		{325, false},
		{500, false},
		{1000, false},
		{2500, true}, // above the allowance's 20%: the rule bites
	}
	for _, tc := range cases {
		rng := rand.New(rand.NewPCG(uint64(tc.rateBasisPoints), 3))
		stopped := 0
		for range epochs {
			var finished, charged uint64
			for range perEpoch {
				if rng.IntN(10_000) < tc.rateBasisPoints {
					charged++
					if charged > p.MissAllowance(finished) {
						stopped++
						break
					}
					continue
				}
				finished++
			}
		}
		t.Logf("miss rate %d.%02d%%: stopped in %d of %d epochs of %d inferences",
			tc.rateBasisPoints/100, tc.rateBasisPoints%100, stopped, epochs, perEpoch)
		if want := map[bool]int{false: 0, true: epochs}[tc.stoppedEvery]; stopped != want {
			t.Fatalf("miss rate %d bp: stopped in %d of %d epochs, want %d", tc.rateBasisPoints, stopped, epochs, want)
		}
	}
}

func TestMissAllowance(t *testing.T) {
	p := types.DefaultParams()
	for _, tc := range []struct{ finished, want uint64 }{
		{0, 10}, {4, 10}, {5, 11}, {100, 30}, {5000, 1010},
		{1 << 50, 10 + (1<<40)*20/100}, // capped far above any epoch's traffic
	} {
		if got := p.MissAllowance(tc.finished); got != tc.want {
			t.Errorf("MissAllowance(%d) = %d, want %d", tc.finished, got, tc.want)
		}
	}
}
