package keeper_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	sdk "github.com/cosmos/cosmos-sdk/types"
	moduletestutil "github.com/cosmos/cosmos-sdk/types/module/testutil"

	"github.com/inferenced/inferenced/x/inference/keeper"
	"github.com/inferenced/inferenced/x/inference/module"
	"github.com/inferenced/inferenced/x/inference/testutil"
	"github.com/inferenced/inferenced/x/inference/types"
)

// richGenesis is a mid-chain state: epoch 3 started at 100, participants in
// every status, and inferences in every status.
func richGenesis() types.GenesisState {
	p1 := gp(1, 10, false, "m", "x")
	p1.CurrentEpochStats = types.CurrentEpochStats{InferenceCount: 3, MissedRequests: 1}
	p1.RegisteredHeight = 4
	p2 := gp(2, 20, true, "m")
	p2.Status = types.PARTICIPANT_STATUS_INACTIVE
	p2.CurrentEpochStats = types.CurrentEpochStats{MissedRequests: 7}
	p3 := gp(3, 30, true, "m")
	p3.Status = types.PARTICIPANT_STATUS_INVALID
	p4 := gp(4, 40, true, "m")
	p4.RegisteredHeight = 120
	member := func(p types.Participant) types.EpochMember {
		return types.EpochMember{Address: p.Address, Weight: p.Weight, Models: p.Models, InferenceUrl: p.InferenceUrl, PocAvailable: p.PocAvailable}
	}
	return types.GenesisState{
		Params:       testParams(),
		Participants: []types.Participant{p1, p2, p3, p4},
		Epoch:        &types.Epoch{Index: 3, StartHeight: 100, Members: 2},
		EpochGroup:   &types.EpochGroup{EpochIndex: 3, Members: []types.EpochMember{member(p1), member(p2)}},
		Inferences: []types.Inference{
			{
				InferenceId: "a-started", Model: "m", TransferAgent: bech(agentByte), Executor: bech(1), PromptHash: "aGk=",
				Status: types.INFERENCE_STATUS_STARTED, EpochIndex: 3, StartHeight: 125, ExpirationHeight: 135,
			},
			{
				InferenceId: "b-finished", Model: "m", TransferAgent: bech(agentByte), Executor: bech(2), PromptHash: "aGk=",
				ResponseHash: "b2s=", Status: types.INFERENCE_STATUS_FINISHED, EpochIndex: 3, StartHeight: 101,
				ExpirationHeight: 111, EndHeight: 103,
			},
			{
				InferenceId: "c-expired", Model: "x", TransferAgent: bech(agentByte), Executor: bech(1),
				Status: types.INFERENCE_STATUS_EXPIRED, EpochIndex: 2, StartHeight: 90, ExpirationHeight: 100, EndHeight: 100,
			},
		},
		// end height + 2 epochs of 50 (testParams), in the prune index's order
		PruneHeights: []types.PruneHeight{
			{TransferAgent: bech(agentByte), InferenceId: "c-expired", Height: 200},
			{TransferAgent: bech(agentByte), InferenceId: "b-finished", Height: 203},
		},
	}
}

func TestDefaultGenesisInitsAndExportsValid(t *testing.T) {
	k, tc := newKeeper(t)
	require.NoError(t, types.DefaultGenesis().Validate(ac))
	require.NoError(t, k.InitGenesis(tc.Ctx, *types.DefaultGenesis()))
	out, err := k.ExportGenesis(tc.Ctx)
	require.NoError(t, err)
	require.Equal(t, types.DefaultGenesis(), out)
	require.NoError(t, out.Validate(ac))
}

func TestGenesisRoundTripsRichState(t *testing.T) {
	requireGenesisRoundTrip(t, richGenesis())
}

// requireGenesisRoundTrip loads gs, checks that its export equals it, and
// loads that export through JSON (as genesis files and `export` do) into a
// fresh keeper whose bank holds the agents' bonds, whose export must equal
// gs too. It returns the second keeper and its context.
func requireGenesisRoundTrip(t *testing.T, gs types.GenesisState) (keeper.Keeper, sdk.Context) {
	t.Helper()
	require.NoError(t, gs.Validate(ac))
	f := newFixture(t, withGenesis(gs))
	out, err := f.k.ExportGenesis(f.ctx)
	require.NoError(t, err)
	require.Equal(t, &gs, out)

	cdc := moduletestutil.MakeTestEncodingConfig(module.AppModule{}).Codec
	bz, err := cdc.MarshalJSON(out)
	require.NoError(t, err)
	var decoded types.GenesisState
	require.NoError(t, cdc.UnmarshalJSON(bz, &decoded))
	k2, tc2, bank2 := testutil.KeeperWithBank(t)
	bank2.HoldBonds(decoded.TransferAgents)
	bank2.HoldParticipantBonds(decoded.Participants)
	require.NoError(t, k2.InitGenesis(tc2.Ctx, decoded))
	out2, err := k2.ExportGenesis(tc2.Ctx)
	require.NoError(t, err)
	require.Equal(t, &gs, out2)
	return k2, tc2.Ctx
}

func TestGenesisRebuildsExpiryQueueAndMemberIndex(t *testing.T) {
	f := newFixture(t, withGenesis(richGenesis()))
	f.height = 125
	f.advanceTo(134)
	require.Equal(t, uint64(3), f.group().EpochIndex, "no boundary before 150")
	require.Equal(t, types.INFERENCE_STATUS_STARTED, f.inference("a-started").Status)

	f.block(135)
	inf := f.inference("a-started")
	require.Equal(t, types.INFERENCE_STATUS_EXPIRED, inf.Status)
	require.Equal(t, int64(135), inf.EndHeight)
	require.Equal(t, []string{"a-started"}, f.expired())
	f.block(136)
	require.Equal(t, types.CurrentEpochStats{InferenceCount: 3, MissedRequests: 1}, f.participant(1).CurrentEpochStats,
		"one agent's miss is held, not counted")
	require.Equal(t, uint32(1), f.health(1).HeldMisses)
	requireQueueEmpty(t, f)
	require.Equal(t, types.INFERENCE_STATUS_FINISHED, f.inference("b-finished").Status, "closed inferences are not requeued")

	// The member index came from the group: 1 routable, 2 INACTIVE, 4 not a member.
	require.NoError(t, f.k.CheckRoutable(f.ctx, addr(1), "x"))
	require.ErrorIs(t, f.k.CheckRoutable(f.ctx, addr(2), "m"), types.ErrExecutorNotRoutable)
	require.ErrorIs(t, f.k.CheckRoutable(f.ctx, addr(4), "m"), types.ErrExecutorNotRoutable)

	f.advanceTo(150)
	require.Equal(t, uint64(4), f.group().EpochIndex)
	require.Equal(t, []string{bech(1), bech(2), bech(4)}, memberAddrs(f.group()))
}

func TestInitGenesisRejectsInvalidAndStoresNothing(t *testing.T) {
	bad := richGenesis()
	bad.Participants = append(bad.Participants, bad.Participants[0])
	k, tc := newKeeper(t)
	require.Error(t, k.InitGenesis(tc.Ctx, bad))
	has, err := k.Params.Has(tc.Ctx)
	require.NoError(t, err)
	require.False(t, has)
	n := 0
	require.NoError(t, k.Participants.Walk(tc.Ctx, nil, func(sdk.AccAddress, types.Participant) (bool, error) { n++; return false, nil }))
	require.Zero(t, n)
}

// The model totals the exclusion cap reads are rebuilt from the imported group.
func TestGenesisImportRebuildsModelWeights(t *testing.T) {
	k, tc, bank := testutil.KeeperWithBank(t)
	gs := richGenesis()
	bank.HoldParticipantBonds(gs.Participants)
	require.NoError(t, k.InitGenesis(tc.Ctx, gs))
	for model, want := range map[string]uint64{"m": 30, "x": 10} {
		got, err := k.ModelWeights.Get(tc.Ctx, model)
		require.NoError(t, err)
		require.Equal(t, want, got, model)
	}
}
