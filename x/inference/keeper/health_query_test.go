package keeper_test

import (
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/cosmos/cosmos-sdk/types/query"

	"github.com/inferenced/inferenced/x/inference/types"
)

func TestExcludedExecutorsListsExcludedAndProbeOnly(t *testing.T) {
	p := breakerParams()
	p.HealthCbMaxExcludedWeightPct = 100
	f := newBreakerFixture(t, withParams(p))
	f.feed(1, "mmm")
	f.feed(2, "om") // healthy, with a record
	f.feed(3, "mmm")
	f.runUntil(bInitial+1, func() bool { return f.health(1).State == types.HEALTH_STATE_PROBE })
	resp, err := f.excluded()
	require.NoError(t, err)
	require.Len(t, resp.Executors, 2)
	byAddr := map[string]types.HealthStatus{}
	for _, h := range resp.Executors {
		byAddr[h.Address] = h
	}
	require.Equal(t, types.HEALTH_STATE_PROBE, byAddr[bech(1)].State)
	require.Zero(t, byAddr[bech(1)].EligibleHeight, "eligible-at only applies while EXCLUDED")
	ex := byAddr[bech(3)]
	require.Equal(t, types.HEALTH_STATE_EXCLUDED, ex.State)
	require.Equal(t, ex.ExcludedAt+bInitial, ex.EligibleHeight)
	require.Equal(t, uint32(1), ex.Exclusions)

	page, err := f.query.ExcludedExecutors(f.ctx, &types.QueryExcludedExecutorsRequest{Pagination: &query.PageRequest{Limit: 1, CountTotal: true}})
	require.NoError(t, err)
	require.Len(t, page.Executors, 1)
	require.NotEmpty(t, page.Pagination.NextKey)
}

func TestExecutorHealthQueryRejectsBadAddressAndShowsHealthyDefault(t *testing.T) {
	f := newBreakerFixture(t)
	_, err := f.query.ExecutorHealth(f.ctx, &types.QueryExecutorHealthRequest{Address: "cosmos1bad"})
	require.Equal(t, codes.InvalidArgument, status.Code(err))
	_, err = f.query.ExecutorHealth(f.ctx, nil)
	require.Equal(t, codes.InvalidArgument, status.Code(err))
	require.Equal(t, types.HealthStatus{Address: bech(4)}, f.health(4))
}

// The breaker records and pending samples survive export and import, and the
// cooldown index and record count rebuilt from them behave the same.
func TestGenesisRoundTripKeepsBreakerState(t *testing.T) {
	f := newBreakerFixture(t)
	f.feed(1, "mmm")
	f.feed(2, "mmm")
	f.runUntil(bInitial+1, func() bool { return f.health(1).State == types.HEALTH_STATE_PROBE })
	f.mustStart("probe-1", 1, "m")
	f.feed(3, "m")
	f.mustStart("ok-3", 3, "m")
	require.NoError(t, f.finish(3, "ok-3")) // pending
	f.end()
	exported, err := f.k.ExportGenesis(f.ctx)
	require.NoError(t, err)
	require.Len(t, exported.ExecutorHealth, 3)
	require.Len(t, exported.PendingSamples, 1)
	require.NoError(t, exported.Validate(ac))

	g := newFixture(t, withGenesis(*exported))
	g.height = f.height
	again, err := g.k.ExportGenesis(g.ctx)
	require.NoError(t, err)
	require.Equal(t, exported, again)

	for _, x := range []*fixture{f, g} {
		c := x.census()
		require.Equal(t, 2, c.gated(), "EXCLUDED 2 and PROBE 1 have gates")
		require.Len(t, c.Records, 3, "the record count is rebuilt with the records (census checks it)")
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
