package routes_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	storetypes "github.com/cosmos/cosmos-sdk/store/v2/types"

	"github.com/inferenced/inferenced/x/inference/keeper"
	"github.com/inferenced/inferenced/x/inference/routes"
	"github.com/inferenced/inferenced/x/inference/types"
)

// TestRouteTableFollowsParams: governance turning the breaker's shadow mode
// on is a change of committed state, so the next height's table follows it
// while the previous height's keeps the answer of its own state.
func TestRouteTableFollowsParams(t *testing.T) {
	s := selState{pocBlocks: 5, enforce: true, epochStart: 5, members: []types.EpochMember{
		member(t, 0, 10, true, "a"), member(t, 1, 20, true, "a"), member(t, 2, 30, true, "a"),
	}, statuses: active(3), noRecord: make([]bool, 3), health: []types.ExecutorHealth{excludedUntil(t, 2, 100)}}
	k, ctx := s.load(t)
	q := keeper.NewQueryServerImpl(k, routes.New(k))
	check := func(h int64, candidates uint32) {
		t.Helper()
		c := ctx.WithBlockHeight(h)
		for seed := range uint64(30) {
			want, err := referenceQuery(c, k, breakerStage(k), h, "a", seed)
			require.NoError(t, err)
			got, err := q.GetRandomExecutor(c, &types.QueryGetRandomExecutorRequest{Model: "a", Seed: seed})
			require.NoError(t, err)
			require.Equal(t, want, got, "height %d, seed %d", h, seed)
			require.Equal(t, candidates, got.Candidates, "height %d", h)
		}
	}
	check(20, 2) // enforced: the excluded member is out
	p, err := k.Params.Get(ctx)
	require.NoError(t, err)
	p.HealthCbEnforce = false
	require.NoError(t, k.Params.Set(ctx, p))
	check(21, 3) // shadow mode from the next committed height
}

// TestRouteTableUnderAQueryGasLimit: a node's query-gas-limit that the
// per-member path fits keeps GetRandomExecutor answering, though the first
// query of a height builds the table (which reads every participant).
func TestRouteTableUnderAQueryGasLimit(t *testing.T) {
	s := selState{pocBlocks: 5, enforce: true, epochStart: 5, members: []types.EpochMember{
		member(t, 0, 10, true, "a"), member(t, 1, 20, true, "a"),
	}, statuses: active(2), noRecord: make([]bool, 2), extra: 300}
	k, ctx := s.load(t)
	stage := s.stageOf(k)
	q := keeper.NewQueryServerImpl(k, routes.New(k))
	metered := ctx.WithBlockHeight(20).WithGasMeter(storetypes.NewInfiniteGasMeter())
	want, err := referenceQuery(metered, k, stage, 20, "a", 7)
	require.NoError(t, err)
	limit := 2 * metered.GasMeter().GasConsumed()
	for h := int64(20); h < 23; h++ {
		c := ctx.WithBlockHeight(h).WithGasMeter(storetypes.NewGasMeter(limit))
		got, err := q.GetRandomExecutor(c, &types.QueryGetRandomExecutorRequest{Model: "a", Seed: 7})
		require.NoError(t, err, "height %d", h)
		require.Equal(t, want, got, "height %d", h)
	}
}

// TestWarm: after a commit the app builds the next height's table and the
// routes clients asked for, so the first query of the block finds them; the
// answers stay the reference's. A node no client queries builds nothing.
func TestWarm(t *testing.T) {
	s := selState{pocBlocks: 5, enforce: true, epochStart: 5, members: []types.EpochMember{
		member(t, 0, 10, true, "a"), member(t, 1, 20, true, "a", "b"), member(t, 2, 30, true, "b"),
	}, statuses: active(3), noRecord: make([]bool, 3)}

	k, ctx := s.load(t)
	r := routes.New(k)
	require.NoError(t, r.Warm(ctx.WithBlockHeight(30)))
	require.Equal(t, 0, r.Kept(), "a node nobody queries builds nothing")

	q := keeper.NewQueryServerImpl(k, r)
	_, err := q.GetRandomExecutor(ctx.WithBlockHeight(30), &types.QueryGetRandomExecutorRequest{Model: "a", Seed: 1})
	require.NoError(t, err)
	require.False(t, r.Ready(31, "a"))
	require.NoError(t, r.Warm(ctx.WithBlockHeight(31)))
	require.True(t, r.Ready(31, "a"), "the next height's route of the model asked for is built ahead")
	require.False(t, r.Ready(31, "b"), "a model nobody asked for is not")
	stage := s.stageOf(k)
	for seed := range uint64(20) {
		c := ctx.WithBlockHeight(31)
		want, err := referenceQuery(c, k, stage, 31, "a", seed)
		require.NoError(t, err)
		got, err := q.GetRandomExecutor(c, &types.QueryGetRandomExecutorRequest{Model: "a", Seed: seed})
		require.NoError(t, err)
		require.Equal(t, want, got, "seed %d", seed)
	}
	require.Equal(t, 2, r.Kept())

	late := int64(31 + routes.WarmQueriedWithin + 1)
	require.NoError(t, r.Warm(ctx.WithBlockHeight(late)))
	require.False(t, r.Ready(late, "a"), "no query for longer than the window: nothing built")
}
