package breakerstore_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cosmos/cosmos-sdk/types/query"

	"github.com/inferenced/inferenced/x/inference/types"
)

func TestExcludedExecutorsListsExcludedAndProbeOnly(t *testing.T) {
	p := breakerParams()
	p.HealthCbMaxExcludedWeightPct = 100
	f := newBreakerFixture(t, p)
	f.feed(1, "mmm")
	f.feed(2, "om") // healthy, with a record
	f.feed(3, "mmm")
	f.runUntil(bInitial+1, func() bool { return f.health(1).State == types.HEALTH_STATE_PROBE })
	out := f.notHealthy()
	require.Len(t, out, 2)
	byAddr := map[string]types.HealthStatus{}
	for _, h := range out {
		byAddr[h.Address] = h
	}
	require.Equal(t, types.HEALTH_STATE_PROBE, byAddr[bech(1)].State)
	require.Zero(t, byAddr[bech(1)].EligibleHeight, "eligible-at only applies while EXCLUDED")
	ex := byAddr[bech(3)]
	require.Equal(t, types.HEALTH_STATE_EXCLUDED, ex.State)
	require.Equal(t, ex.ExcludedAt+bInitial, ex.EligibleHeight)
	require.Equal(t, uint32(1), ex.Exclusions)

	page, resp, err := f.s.NotHealthy(f.ctx, &query.PageRequest{Limit: 1, CountTotal: true}, f.params.BreakerParams())
	require.NoError(t, err)
	require.Len(t, page, 1)
	require.NotEmpty(t, resp.NextKey)
}

// The breaker records and pending samples survive export and import, and the
// cooldown index and record count rebuilt from them behave the same.
func TestGenesisRoundTripKeepsBreakerState(t *testing.T) {
	f := newBreakerFixture(t, breakerParams())
	f.feed(1, "mmm")
	f.feed(2, "mmm")
	f.runUntil(bInitial+1, func() bool { return f.health(1).State == types.HEALTH_STATE_PROBE })
	f.mustStart("probe-1", 1, "m")
	f.feed(3, "m")
	f.mustStart("ok-3", 3, "m")
	require.NoError(t, f.finish(3, "ok-3")) // pending
	f.end()
	var exported types.GenesisState
	require.NoError(t, f.s.ExportGenesis(f.ctx, &exported))
	require.Len(t, exported.ExecutorHealth, 3)
	require.Len(t, exported.PendingSamples, 1)

	g := newBreakerFixture(t, breakerParams())
	g.advanceTo(f.height)
	g.seq = f.seq
	for id, inf := range f.inferences { // the inferences in flight are the keeper's, exported with it
		copied := *inf
		g.inferences[id] = &copied
	}
	for i := byte(1); i <= 4; i++ {
		*g.group.find(addr(i)) = *f.group.find(addr(i))
	}
	require.NoError(t, g.s.InitGenesis(g.ctx, exported))
	var again types.GenesisState
	require.NoError(t, g.s.ExportGenesis(g.ctx, &again))
	require.Equal(t, exported, again)

	for _, x := range []*fixture{f, g} {
		c := x.census() // the cooldown index, gates and count rebuilt with the records
		require.Len(t, c.ExecutorHealth, 3)
		require.Len(t, x.notHealthy(), 2, "EXCLUDED 2 and PROBE 1")
		require.Zero(t, x.offered(400)[bech(2)], "an imported EXCLUDED executor is not offered")
	}
	eligible := f.health(2).EligibleHeight
	for _, x := range []*fixture{f, g} {
		x.begin(x.height + 1)
		require.Equal(t, types.HEALTH_STATE_HEALTHY, x.health(3).State)
		require.Equal(t, uint32(2), x.health(3).TrafficSamples, "the pending success was applied")
		x.runUntil(int(eligible-x.height)+1, func() bool { return x.health(2).State == types.HEALTH_STATE_PROBE })
		require.Equal(t, eligible, x.height)
	}
}
