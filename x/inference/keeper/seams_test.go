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
	h := &fakeHealth{filter: func(pool []keeper.Candidate) []keeper.Candidate {
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

// Stats belong to the epoch that reset them: an inference started before a
// boundary and expiring after it must not count as a miss of the new epoch,
// nor push the executor towards INACTIVE there.
func TestOutcomeOfPreviousEpochInferenceIsNotCountedInNewEpoch(t *testing.T) {
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
	require.Equal(t, types.INFERENCE_STATUS_FINISHED, f.inference("old-finish").Status)
	require.Equal(t, types.CurrentEpochStats{}, f.participant(1).CurrentEpochStats)
	require.Equal(t, types.CurrentEpochStats{}, f.participant(2).CurrentEpochStats)
	require.Equal(t, []string{"old-miss"}, f.hooks.expired, "hooks still see every outcome")
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
