package keeper_test

// The growth benchmark's calls into the keeper's retention, inference and
// participant API, in one file.

import (
	"encoding/binary"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cosmos/cosmos-sdk/testutil"
	sdk "github.com/cosmos/cosmos-sdk/types"

	"github.com/inferenced/inferenced/x/inference/keeper"
	inftest "github.com/inferenced/inferenced/x/inference/testutil"
	"github.com/inferenced/inferenced/x/inference/types"
)

// withRetention sets how many epochs closed inferences are kept (0: the
// run's default, whatever the params hold).
func withRetention(p *types.Params, epochs uint64) {
	if epochs != 0 {
		p.InferenceRetentionEpochs = epochs
	}
}

// retentionOf is the retention in force under p, for the report.
func retentionOf(p types.Params) uint64 { return p.InferenceRetentionEpochs }

// growthGenesis builds the keeper over an in-memory store with n ACTIVE
// executors of weight 100 serving inftest.Model (executor i at 0…0 |
// i+1, as inftest.Network) and the bonded agents, and commits genesis.
// Each executor is bonded for its weight, the module account holding the
// bonds.
func growthGenesis(tb testing.TB, n int, params types.Params, agents []sdk.AccAddress) (keeper.Keeper, testutil.TestContext, []sdk.AccAddress) {
	tb.Helper()
	k, tc, bank := inftest.KeeperWithBank(tb)
	gs := types.DefaultGenesis()
	gs.Params = params
	bonded, err := inftest.BondedAgents(params, agents...)
	require.NoError(tb, err)
	gs.TransferAgents = bonded
	bank.HoldBonds(bonded)
	execs := make([]sdk.AccAddress, n)
	for i := range execs {
		a := make([]byte, 20)
		binary.BigEndian.PutUint32(a[16:], uint32(i+1))
		execs[i] = a
		s, err := inftest.AddressCodec.BytesToString(a)
		require.NoError(tb, err)
		gs.Participants = append(gs.Participants, types.Participant{
			Address: s, InferenceUrl: "http://x.example/", Models: []string{inftest.Model}, Weight: 100,
			PocAvailable: true, Status: types.PARTICIPANT_STATUS_ACTIVE, Bond: types.BondForWeight(100, params),
		})
	}
	bank.HoldParticipantBonds(gs.Participants)
	require.NoError(tb, k.InitGenesis(tc.Ctx.WithBlockHeight(0), *gs))
	tc.CMS.Commit()
	return k, tc, execs
}

// growthID is the run's j-th inference id (unique per agent, as ids are).
func growthID(j uint64) string { return fmt.Sprintf("g-%d", j) }

// startGrowth starts inference id from agent on executor.
func startGrowth(k keeper.Keeper, ctx sdk.Context, agent, executor sdk.AccAddress, id string) error {
	_, err := k.StartInference(ctx, keeper.StartRequest{
		TransferAgent: agent, Executor: executor, InferenceID: id, Model: inftest.Model, PromptHash: "cHJvbXB0",
	})
	return err
}

// finishGrowth finishes agent's inference id for its executor.
func finishGrowth(k keeper.Keeper, ctx sdk.Context, executor, agent sdk.AccAddress, id string) error {
	return k.FinishInference(ctx, executor, agent, id, "cmVzcG9uc2U=")
}

// storedInferences counts the retained inferences in the store.
func storedInferences(ctx sdk.Context, k keeper.Keeper) (int, error) {
	var gs types.GenesisState
	if err := k.Inferences().ExportGenesis(ctx, &gs); err != nil {
		return 0, err
	}
	return len(gs.Inferences), nil
}

// blockEnd is the step of a block in which pruning runs: EndBlock.
func blockEnd(ctx sdk.Context, k keeper.Keeper) error { return k.EndBlock(ctx) }
