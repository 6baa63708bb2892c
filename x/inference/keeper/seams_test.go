package keeper_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	sdk "github.com/cosmos/cosmos-sdk/types"

	"github.com/inferenced/inferenced/x/inference/keeper"
	"github.com/inferenced/inferenced/x/inference/types"
)

// A health stage that offers every candidate at weight 0 has, in effect,
// filtered them all out: the fallback must return the pre-health pool
// instead of failing the query.
func TestHealthStageZeroingEveryWeightFallsBack(t *testing.T) {
	h := &fakeHealth{filter: func(pool []types.Candidate) []types.Candidate {
		for i := range pool {
			pool[i].Weight = 0
		}
		return pool
	}}
	f := weighted(t, withHealth(h))
	resp, err := f.draw("m", 3)
	require.NoError(t, err)
	require.Equal(t, uint32(4), resp.Candidates)
	require.Equal(t, uint64(10), resp.TotalWeight, "the fallback pool keeps the epoch weights")
}

// A weight-0 member can never be drawn, so enforcement must not let a
// transfer agent route to it either (selection and enforcement agree).
func TestStartInferenceRefusesWeightZeroMember(t *testing.T) {
	f := newFixture(t, withParticipants(gp(1, 0, true, "m"), gp(2, 5, true, "m")))
	f.begin(1)
	_, err := f.start("to-zero", 1, "m")
	require.ErrorIs(t, err, types.ErrExecutorNotRoutable)
	require.ErrorContains(t, err, "weight 0")
	f.mustStart("to-two", 2, "m")
}

// An outcome counts in the epoch where it happens, even for an inference
// started before the boundary; otherwise an executor could ignore every
// request of an epoch's last blocks without a miss on record.
func TestOutcomeOfPreviousEpochInferenceCountsInTheEpochItHappens(t *testing.T) {
	f := newFixture(t, withParticipants(gp(1, 10, true, "m"), gp(2, 10, true, "m")))
	f.begin(1)
	f.end()
	f.advanceTo(testEpochLength - 2)
	f.begin(testEpochLength - 1)
	f.mustStart("old-miss", 1, "m")
	f.mustStart("old-finish", 2, "m")
	f.end()
	f.advanceTo(testEpochLength + 1) // epoch 2 starts at 1 + testEpochLength
	require.Equal(t, uint64(2), mustEpoch(t, f).Index)
	require.NoError(t, f.finish(2, "old-finish"))
	f.advanceTo(testEpochLength - 1 + testExpiration)

	require.Equal(t, types.INFERENCE_STATUS_EXPIRED, f.inference("old-miss").Status)
	require.Equal(t, types.CurrentEpochStats{MissedRequests: 1}, f.participant(1).CurrentEpochStats)
	require.Equal(t, types.CurrentEpochStats{InferenceCount: 1}, f.participant(2).CurrentEpochStats)
}

// Registration is bounded (max_participants), so a flood of registrations
// cannot make every epoch boundary arbitrarily slow; and a weight-0
// registration, which could never be drawn, is refused.
func TestRegisterParticipantRefusesFullRegistryAndZeroWeight(t *testing.T) {
	p := testParams()
	p.MaxParticipants = 3
	f := newFixture(t, withParams(p), withParticipants(gp(1, 10, true, "m")))
	f.begin(1)
	err := f.register(2, 0, false, "m")
	require.ErrorIs(t, err, types.ErrInvalidParticipant)
	require.ErrorContains(t, err, "weight must be >= 1")
	require.NoError(t, f.register(2, 1, false, "m"))
	require.NoError(t, f.register(3, 1, false, "m"))
	err = f.register(4, 1, false, "m")
	require.ErrorIs(t, err, types.ErrInvalidParticipant)
	require.ErrorContains(t, err, "registry is full")
	count, err := f.k.ParticipantCount.Get(f.ctx)
	require.NoError(t, err)
	require.Equal(t, uint64(3), count)
}

// A query reads the last committed block but the start it informs executes
// in the next one: at the last committed block before the PoC phase ends,
// selection must already offer the non-PoC executors that the start will
// accept, and never one the start would refuse.
func TestRandomExecutorEvaluatesStagesAtTheNextBlock(t *testing.T) {
	f := newFixture(t, withParticipants(gp(1, 10, true, "m"), gp(2, 1000, false, "m")))
	f.begin(1)
	// Blocks [1, 1+testPocBlocks) are the PoC phase. At committed height
	// testPocBlocks-1 the next block is still PoC: only executor 1 is offered.
	f.advanceTo(testPocBlocks - 1)
	for seed := uint64(0); seed < 50; seed++ {
		resp, err := f.draw("m", seed)
		require.NoError(t, err)
		require.Equal(t, bech(1), resp.Executor.Address, "the next block is in the PoC phase")
	}
	f.advanceTo(testPocBlocks) // the next block, 1+testPocBlocks, serves everyone
	seen := map[string]bool{}
	for seed := uint64(0); seed < 50; seed++ {
		resp, err := f.draw("m", seed)
		require.NoError(t, err)
		seen[resp.Executor.Address] = true
	}
	require.True(t, seen[bech(2)], "executor 2 serves from the next block on")
}

// Hooks and the health stage installed on the app's keeper after the
// servers were built must reach the servers' copies too.
func TestSeamsInstalledAfterServersReachEveryCopy(t *testing.T) {
	k, tc := newKeeper(t)
	ctx := tc.Ctx.WithBlockHeight(0)
	gs := types.DefaultGenesis()
	gs.Params = testParams()
	gs.Participants = []types.Participant{gp(1, 10, true, "m")}
	require.NoError(t, k.InitGenesis(ctx, *gs))
	msgs := keeper.NewMsgServerImpl(k)

	refused := &fakeHealth{check: func(sdk.AccAddress) error { return types.ErrExecutorNotRoutable }}
	k.SetHealthStage(refused)
	require.NoError(t, k.BeginBlock(ctx.WithBlockHeight(1)))
	_, err := msgs.StartInference(ctx.WithBlockHeight(1), &types.MsgStartInference{
		Creator: bech(agentByte), Executor: bech(1), InferenceId: "x", Model: "m",
	})
	require.ErrorIs(t, err, types.ErrExecutorNotRoutable)
}

func mustEpoch(t *testing.T, f *fixture) types.Epoch {
	t.Helper()
	e, err := f.k.Epoch.Get(f.ctx)
	require.NoError(t, err)
	return e
}
