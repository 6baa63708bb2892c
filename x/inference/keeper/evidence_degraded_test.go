package keeper_test

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/inferenced/inferenced/x/inference/types"
)

// P2 over random traffic: a degraded executor, whose inferences fail at
// random at 28% and at 40% whoever sends them, served by three agents
// taking turns at random, inferences in flight three blocks. Over 20
// seeded runs each, it reports how many inferences it took until the
// exclusion, with the corroboration rule (two agents) and, side by side,
// trusting every agent (one), so the cost of corroboration is visible
// apart from the trip rule's own (25% over 16, or 3 in a row: at 28%, five
// misses in the last sixteen is a fluctuation, corroboration or not).
// Asserted: the median run is excluded within 40 inferences, and with two
// inferences a block every run is excluded within 100.
func TestDegradedExecutorIsExcludedOnRandomTraffic(t *testing.T) {
	for _, pct := range []int{28, 40} {
		for _, perBlock := range []int{1, 2} {
			for _, minAgents := range []uint64{2, 1} {
				var runs []int
				for seed := range 20 {
					runs = append(runs, inferencesToExclusion(t, uint64(seed), pct, perBlock, minAgents))
				}
				slices.Sort(runs)
				median := runs[len(runs)/2]
				t.Logf("fail %d%%, %d a block, min agents %d: median %d, worst %d, runs over 40: %d of %d",
					pct, perBlock, minAgents, median, runs[len(runs)-1], countOver(runs, 40), len(runs))
				if minAgents == 2 {
					require.LessOrEqual(t, median, 40, "fail %d%%, %d a block", pct, perBlock)
					if perBlock == 2 {
						require.LessOrEqual(t, runs[len(runs)-1], 100, "fail %d%%, %d a block", pct, perBlock)
					}
				}
			}
		}
	}
}

func inferencesToExclusion(t *testing.T, seed uint64, pct, perBlock int, minAgents uint64) int {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 1))
	f := newEvidenceFixture(t, func(p *types.Params) {
		p.ExpirationBlocks = 3
		p.HealthCbTrafficMinAgents = minAgents
	})
	addAgents(t, f, agentC)
	agents := []byte{agentA, agentB, agentC}
	n := 0
	for f.health(1).State == types.HEALTH_STATE_HEALTHY && n < 200 {
		for range perBlock {
			f.send(agents[rng.IntN(len(agents))], 1, rng.IntN(100) >= pct)
			n++
		}
		f.next()
	}
	return n
}

func countOver(runs []int, limit int) int {
	n := 0
	for _, r := range runs {
		if r > limit {
			n++
		}
	}
	return n
}
