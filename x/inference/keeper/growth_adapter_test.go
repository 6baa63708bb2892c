package keeper_test

// The growth benchmark's every call into the parts of the keeper that
// issue 13 changes (retention, agent-scoped ids, bond-backed participants),
// in one file, so that the benchmark follows the new API by editing only
// this file. Each place to change is marked INTEGRATOR.

import (
	"encoding/binary"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cosmos/cosmos-sdk/testutil"
	sdk "github.com/cosmos/cosmos-sdk/types"

	"github.com/inferenced/inferenced/x/inference/keeper"
	"github.com/inferenced/inferenced/x/inference/keeper/keepertest"
	"github.com/inferenced/inferenced/x/inference/types"
)

// growthRetention is the retention the run asked for. INTEGRATOR: once the
// param lands it is read back from the params the run stores, so drop it.
var growthRetention uint64

// withRetention sets how many epochs closed inferences are kept (0: the
// run's default, whatever the params hold).
//
// INTEGRATOR: today's main has no retention param, so this only records
// the value and nothing is pruned (the figures are "without pruning").
// With the param, replace the body by
//
//	if epochs != 0 { p.InferenceRetentionEpochs = epochs }
func withRetention(p *types.Params, epochs uint64) {
	_ = p
	growthRetention = epochs
}

// retentionOf is the retention in force under p, for the report.
// INTEGRATOR: return p.InferenceRetentionEpochs.
func retentionOf(p types.Params) uint64 {
	_ = p
	return 0
}

// growthGenesis builds the keeper over an in-memory store with n ACTIVE
// executors of weight 100 serving keepertest.Model (executor i at 0…0 |
// i+1, as keepertest.Network) and the bonded agents, and commits genesis.
// INTEGRATOR: when participants need a bond (helper P), give each genesis
// participant its bond here and fund the module account with it, as
// bank.HoldBonds does for the agents.
func growthGenesis(tb testing.TB, n int, params types.Params, agents []sdk.AccAddress) (keeper.Keeper, testutil.TestContext, []sdk.AccAddress) {
	tb.Helper()
	k, tc, bank := keepertest.KeeperWithBank(tb)
	gs := types.DefaultGenesis()
	gs.Params = params
	bonded, err := keepertest.BondedAgents(params, agents...)
	require.NoError(tb, err)
	gs.TransferAgents = bonded
	bank.HoldBonds(bonded)
	execs := make([]sdk.AccAddress, n)
	for i := range execs {
		a := make([]byte, 20)
		binary.BigEndian.PutUint32(a[16:], uint32(i+1))
		execs[i] = a
		s, err := keepertest.AddressCodec.BytesToString(a)
		require.NoError(tb, err)
		gs.Participants = append(gs.Participants, types.Participant{
			Address: s, InferenceUrl: "http://x.example/", Models: []string{keepertest.Model}, Weight: 100,
			PocAvailable: true, Status: types.PARTICIPANT_STATUS_ACTIVE,
		})
	}
	require.NoError(tb, k.InitGenesis(tc.Ctx.WithBlockHeight(0), *gs))
	tc.CMS.Commit()
	return k, tc, execs
}

// growthID is the run's j-th inference id. Ids are global today; with
// agent-scoped ids they stay unique per agent, so the same format serves.
func growthID(j uint64) string { return fmt.Sprintf("g-%d", j) }

// startGrowth starts inference id from agent on executor.
// INTEGRATOR: if StartRequest's fields change with agent-scoped ids, here.
func startGrowth(k keeper.Keeper, ctx sdk.Context, agent, executor sdk.AccAddress, id string) error {
	_, err := k.StartInference(ctx, keeper.StartRequest{
		TransferAgent: agent, Executor: executor, InferenceID: id, Model: keepertest.Model, PromptHash: "cHJvbXB0",
	})
	return err
}

// finishGrowth finishes agent's inference id for its executor.
// INTEGRATOR: with agent-scoped ids the finish names the agent too, e.g.
// k.FinishInference(ctx, executor, agentBech32, id, hash): agent is here.
func finishGrowth(k keeper.Keeper, ctx sdk.Context, executor, agent sdk.AccAddress, id string) error {
	_ = agent
	return k.FinishInference(ctx, executor, id, "cmVzcG9uc2U=")
}

// storedInferences counts the inferences in the store, retained ones only
// once pruning lands (the key type of k.Inferences may change; the walk
// does not depend on it).
func storedInferences(ctx sdk.Context, k keeper.Keeper) (int, error) {
	it, err := k.Inferences.Iterate(ctx, nil)
	if err != nil {
		return 0, fmt.Errorf("iterate inferences: %w", err)
	}
	n := 0
	for ; it.Valid(); it.Next() {
		n++
	}
	if err := it.Close(); err != nil {
		return 0, fmt.Errorf("close inference iterator: %w", err)
	}
	return n, nil
}

// blockEnd is the step of a block in which pruning runs: EndBlock.
// INTEGRATOR: if pruning runs elsewhere (BeginBlock at the boundary),
// point this at that step; the benchmark's due/idle pair measures it.
func blockEnd(ctx sdk.Context, k keeper.Keeper) error { return k.EndBlock(ctx) }
