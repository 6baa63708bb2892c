package keeper_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	storetypes "cosmossdk.io/store/types"

	sdk "github.com/cosmos/cosmos-sdk/types"

	"github.com/inferenced/inferenced/x/inference/keeper"
	"github.com/inferenced/inferenced/x/inference/types"
)

// dropFirst is a health stage that removes the first candidate.
type dropFirst struct{}

func (dropFirst) Filter(_ context.Context, _ int64, pool []types.Candidate) ([]types.Candidate, error) {
	if len(pool) == 0 {
		return pool, nil
	}
	return pool[1:], nil
}

func (dropFirst) CheckStart(context.Context, sdk.AccAddress, string) error { return nil }

// TestRouteTableFollowsTheHealthStage: a table built under one stage is
// never served under another at the same height (the generation in its key).
func TestRouteTableFollowsTheHealthStage(t *testing.T) {
	s := selState{pocBlocks: 5, enforce: true, epochStart: 5, members: []types.EpochMember{
		member(t, 0, 10, true, "a"), member(t, 1, 20, true, "a"), member(t, 2, 30, true, "a"),
	}, statuses: active(3), noRecord: make([]bool, 3), stage: true}
	k, ctx := s.load(t)
	q := keeper.NewQueryServerImpl(k)
	c := ctx.WithBlockHeight(20)
	for i, stage := range []keeper.HealthStage{keeper.DefaultHealthStage(k), dropFirst{}} {
		if i > 0 {
			k.SetHealthStage(stage)
		}
		for seed := range uint64(30) {
			want, wantErr := referenceQuery(c, k, stage, 20, "a", seed)
			require.NoError(t, wantErr)
			got, err := q.GetRandomExecutor(c, &types.QueryGetRandomExecutorRequest{Model: "a", Seed: seed})
			require.NoError(t, err)
			require.Equal(t, want, got, "stage %d, seed %d", i, seed)
		}
	}
}

// TestRouteTableUnderAQueryGasLimit: a node's query-gas-limit that the
// per-member path fits keeps GetRandomExecutor answering, though the first
// query of a height builds the table (which reads every participant).
func TestRouteTableUnderAQueryGasLimit(t *testing.T) {
	s := selState{pocBlocks: 5, enforce: true, epochStart: 5, members: []types.EpochMember{
		member(t, 0, 10, true, "a"), member(t, 1, 20, true, "a"),
	}, statuses: active(2), noRecord: make([]bool, 2), extra: 300, stage: true}
	k, ctx := s.load(t)
	stage := s.stageOf(k)
	q := keeper.NewQueryServerImpl(k)
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

// TestWarmRouteTables: after a commit the app builds the next height's table
// and the routes clients asked for, so the first query of the block finds
// them; the answers stay the reference's. A node no client queries builds
// nothing.
func TestWarmRouteTables(t *testing.T) {
	s := selState{pocBlocks: 5, enforce: true, epochStart: 5, members: []types.EpochMember{
		member(t, 0, 10, true, "a"), member(t, 1, 20, true, "a", "b"), member(t, 2, 30, true, "b"),
	}, statuses: active(3), noRecord: make([]bool, 3), stage: true}

	k, ctx := s.load(t)
	require.NoError(t, k.WarmRouteTables(ctx.WithBlockHeight(30)))
	require.Equal(t, 0, k.RouteTablesKept(), "a node nobody queries builds nothing")

	q := keeper.NewQueryServerImpl(k)
	_, err := q.GetRandomExecutor(ctx.WithBlockHeight(30), &types.QueryGetRandomExecutorRequest{Model: "a", Seed: 1})
	require.NoError(t, err)
	require.False(t, k.RouteReady(31, "a"))
	require.NoError(t, k.WarmRouteTables(ctx.WithBlockHeight(31)))
	require.True(t, k.RouteReady(31, "a"), "the next height's route of the model asked for is built ahead")
	require.False(t, k.RouteReady(31, "b"), "a model nobody asked for is not")
	stage := s.stageOf(k)
	for seed := range uint64(20) {
		c := ctx.WithBlockHeight(31)
		want, err := referenceQuery(c, k, stage, 31, "a", seed)
		require.NoError(t, err)
		got, err := q.GetRandomExecutor(c, &types.QueryGetRandomExecutorRequest{Model: "a", Seed: seed})
		require.NoError(t, err)
		require.Equal(t, want, got, "seed %d", seed)
	}
	require.Equal(t, 2, k.RouteTablesKept())

	late := int64(31 + keeper.WarmQueriedWithin + 1)
	require.NoError(t, k.WarmRouteTables(ctx.WithBlockHeight(late)))
	require.False(t, k.RouteReady(late, "a"), "no query for longer than the window: nothing built")
}
