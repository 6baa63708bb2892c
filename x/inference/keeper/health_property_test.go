package keeper_test

import (
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/inferenced/inferenced/x/inference/types"
)

// TestPropertyBreakerUnderRandomTraffic drives six executors with random
// finishes, misses and attested verdicts across epoch boundaries and checks
// after every block: cooldowns within [initial, max]; the cooldown index
// holds exactly the EXCLUDED records; the record count equals the records
// and the queued-samples mark is set exactly while samples are queued; an
// EXCLUDED executor is never offered except by the fallback; and
// nothing is left after an epoch boundary.
func TestPropertyBreakerUnderRandomTraffic(t *testing.T) {
	seen := map[types.HealthState]int{}
	for run := range 12 {
		rng := rand.New(rand.NewPCG(uint64(run), 7))
		p := breakerParams()
		p.EpochLength = 60
		p.HealthCbMaxExcludedWeightPct = 1 + rng.Uint64N(100)
		var ps []types.Participant
		for i := byte(1); i <= 6; i++ {
			ps = append(ps, gp(i, 1+rng.Uint64N(20), true, "m"))
		}
		f := newFixture(t, withParams(p), withParticipants(ps...))
		f.begin(1)
		missPct := make([]int, 7)
		for i := range missPct {
			missPct[i] = rng.IntN(101)
		}
		for f.height < 200 {
			for i := byte(1); i <= 6; i++ {
				if rng.IntN(3) == 0 {
					f.attest(i, rng.IntN(100) < missPct[i])
				}
				if rng.IntN(2) == 0 {
					continue
				}
				id := f.newID()
				if _, err := f.start(id, i, "m"); err != nil {
					require.ErrorIs(t, err, types.ErrExecutorNotRoutable)
					continue
				}
				if rng.IntN(100) >= missPct[i] {
					require.NoError(t, f.finish(i, id))
				}
			}
			f.next()
			for _, ev := range typedEvents[*types.EventExecutorHealthChanged](t, f.ctx) {
				seen[ev.To]++
			}
			checkBreakerInvariants(t, f, p)
		}
	}
	// The runs must exercise every transition, or they prove little.
	for _, s := range []types.HealthState{types.HEALTH_STATE_EXCLUDED, types.HEALTH_STATE_PROBE, types.HEALTH_STATE_HEALTHY} {
		require.Positive(t, seen[s], "no transition to %s in any run", s)
	}
	t.Logf("transitions to: %v", seen)
}

func checkBreakerInvariants(t *testing.T, f *fixture, p types.Params) {
	t.Helper()
	epoch := mustEpoch(t, f)
	if epoch.StartHeight == f.height {
		requireBreakerEmpty(t, f)
	}
	// census checks the indexes against the records (breakerstore.Store.Invariants):
	// the record count, the queued mark, the cooldown index holding exactly
	// the EXCLUDED records at their eligible height, the gates exactly the
	// EXCLUDED and PROBE ones.
	c := f.census()
	excluded := map[string]bool{}
	out := map[string]bool{}
	for _, h := range c.Records {
		if h.State == types.HEALTH_STATE_HEALTHY {
			continue
		}
		out[h.Address] = true
		require.GreaterOrEqual(t, h.CooldownBlocks, p.HealthCbInitialCooldownBlocks, "height %d", f.height)
		require.LessOrEqual(t, h.CooldownBlocks, p.HealthCbMaxCooldownBlocks, "height %d", f.height)
		if h.State == types.HEALTH_STATE_EXCLUDED {
			eligible := h.ExcludedAt + int64(h.CooldownBlocks)
			require.Greater(t, eligible, f.height, "a due executor was not promoted")
			if eligible > f.height+1 {
				excluded[h.Address] = true
			}
		}
	}
	var outWeight, total uint64
	for _, m := range f.group().Members {
		total += m.Weight
		if out[m.Address] {
			outWeight += m.Weight
		}
	}
	require.LessOrEqual(t, outWeight*100, p.HealthCbMaxExcludedWeightPct*total, "exclusion cap exceeded at %d", f.height)

	sel, err := f.k.Candidates(f.ctx, "m", f.height+1)
	if errors.Is(err, types.ErrNoExecutor) {
		return
	}
	require.NoError(t, err)
	if sel.Fallback {
		return
	}
	for _, c := range sel.Pool {
		require.False(t, excluded[c.Member.Address], "EXCLUDED %s offered at %d", c.Member.Address, f.height+1)
	}
}
