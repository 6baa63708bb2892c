package keeper_test

import (
	"fmt"
	"testing"

	"github.com/cosmos/cosmos-sdk/types/query"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	sdk "github.com/cosmos/cosmos-sdk/types"

	"github.com/inferenced/inferenced/x/inference/escrow"
	"github.com/inferenced/inferenced/x/inference/testutil"
	"github.com/inferenced/inferenced/x/inference/types"
)

func TestTransferAgentQuery(t *testing.T) {
	f := newFixture(t)
	f.block(1)
	f.begin(3)
	for range 20 {
		require.NoError(t, f.k.Agents().Finished(f.ctx, bech(agentByte)))
	}
	for range 15 {
		require.NoError(t, f.k.Agents().Judged(f.ctx, bech(agentByte), +1, false))
	}
	_, err := f.leaveAgent(secondAgentByte)
	require.NoError(t, err)

	resp, err := f.query.TransferAgent(f.ctx, &types.QueryTransferAgentRequest{Address: bech(agentByte)})
	require.NoError(t, err)
	require.Equal(t, types.TransferAgentView{
		Agent: types.TransferAgent{
			Address: bech(agentByte), Bond: minBond,
			Standing: types.AgentStanding{EpochIndex: 1, Finished: 20, ChargedMisses: 15, StoppedHeight: 3},
		},
		MissAllowance: 14, MayStart: false,
	}, resp.Agent)

	resp, err = f.query.TransferAgent(f.ctx, &types.QueryTransferAgentRequest{Address: bech(secondAgentByte)})
	require.NoError(t, err)
	require.False(t, resp.Agent.MayStart, "leaving")
	require.Equal(t, uint64(1), resp.Agent.Agent.LeavingEpoch)
	require.Equal(t, types.AgentStanding{EpochIndex: 1}, resp.Agent.Agent.Standing, "the genesis standing (epoch 0) reads as zero")

	_, err = f.query.TransferAgent(f.ctx, &types.QueryTransferAgentRequest{Address: bech(newAgentByte)})
	require.Equal(t, codes.NotFound, status.Code(err), "%v", err)
	require.Contains(t, err.Error(), "not a registered transfer agent")
	for _, bad := range []string{"", "infer1bad", "cosmos1qqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqnrql8a"} {
		_, err = f.query.TransferAgent(f.ctx, &types.QueryTransferAgentRequest{Address: bad})
		require.Equal(t, codes.InvalidArgument, status.Code(err), "address %q", bad)
	}
	_, err = f.query.TransferAgent(f.ctx, nil)
	require.Equal(t, codes.InvalidArgument, status.Code(err))
}

func TestTransferAgentsQueryPaginatesInAddressOrder(t *testing.T) {
	f := newFixture(t)
	f.block(1)
	f.bank.Fund(addr(0x01), minBond)
	require.NoError(t, f.registerAgent(0x01, minBond))

	all, err := f.query.TransferAgents(f.ctx, nil)
	require.NoError(t, err)
	var got []string
	for _, v := range all.Agents {
		got = append(got, v.Agent.Address)
		require.True(t, v.MayStart)
		require.Equal(t, uint64(types.DefaultTransferAgentMissAllowance), v.MissAllowance)
	}
	require.Equal(t, []string{bech(0x01), bech(agentByte), bech(secondAgentByte)}, got)

	page, err := f.query.TransferAgents(f.ctx, &types.QueryTransferAgentsRequest{Pagination: &query.PageRequest{Limit: 2, CountTotal: true}})
	require.NoError(t, err)
	require.Len(t, page.Agents, 2)
	require.Equal(t, uint64(3), page.Pagination.Total)
	next, err := f.query.TransferAgents(f.ctx, &types.QueryTransferAgentsRequest{Pagination: &query.PageRequest{Key: page.Pagination.NextKey}})
	require.NoError(t, err)
	require.Equal(t, []types.TransferAgentView{all.Agents[2]}, next.Agents)

	_, err = f.query.TransferAgents(f.ctx, &types.QueryTransferAgentsRequest{Pagination: &query.PageRequest{Key: []byte{1}, Offset: 1}})
	require.Equal(t, codes.InvalidArgument, status.Code(err), "key and offset together")
}

// agentGenesis is a mid-epoch registry: epoch 3, one agent stopped this
// epoch, one leaving, one with a stale standing of epoch 2.
func agentGenesis() types.GenesisState {
	gs := richGenesis()
	gs.TransferAgents = []types.TransferAgent{
		{
			Address: bech(agentByte), Bond: minBond, RegisteredEpoch: 1,
			Standing: types.AgentStanding{EpochIndex: 3, Starts: 30, Finished: 5, ChargedMisses: 11, StoppedHeight: 120},
		},
		{Address: bech(secondAgentByte), Bond: stake(3_000_000), RegisteredEpoch: 2, LeavingEpoch: 3},
		{
			Address: bech(0xAC), Bond: minBond, RegisteredEpoch: 3,
			Standing: types.AgentStanding{EpochIndex: 2, Starts: 9, CorroboratedMisses: 2},
		},
	}
	return gs
}

func TestTransferAgentGenesisRoundTrip(t *testing.T) {
	k2, ctx2 := requireGenesisRoundTrip(t, agentGenesis())
	n, err := k2.Agents().Count(ctx2)
	require.NoError(t, err)
	require.Equal(t, uint64(3), n)
}

// Import rebuilds what export leaves out: the count (enforced on the next
// registration), the leaving index (released at the next boundary), and
// the stopped agent stays stopped until then.
func TestTransferAgentGenesisRebuildsCountAndLeavingIndex(t *testing.T) {
	gs := agentGenesis()
	gs.Params.MaxTransferAgents = 4
	f := newFixture(t, withGenesis(gs))
	f.height = 125
	f.block(126)
	require.ErrorIs(t, f.k.Agents().Starting(f.ctx, addr(agentByte)), types.ErrAgentStopped)
	require.ErrorIs(t, f.k.Agents().Starting(f.ctx, addr(secondAgentByte)), types.ErrAgentLeaving)
	require.NoError(t, f.k.Agents().Starting(f.ctx, addr(0xAC)))
	require.Equal(t, types.AgentStanding{EpochIndex: 3, Starts: 1}, f.agent(0xAC).Standing, "the stale standing reset")
	f.bank.Fund(addr(0xC1), minBond)
	f.bank.Fund(addr(0xC2), minBond)
	require.NoError(t, f.registerAgent(0xC1, minBond))
	require.ErrorIs(t, f.registerAgent(0xC2, minBond), types.ErrTooManyAgents, "the imported count is enforced")

	f.advanceTo(150) // epoch 4 starts at 150
	require.Equal(t, uint64(4), mustEpoch(t, f).Index)
	require.Equal(t, sdk.NewCoins(stake(3_000_000)), f.bank.Balances(addr(secondAgentByte)))
	require.Equal(t, uint64(3), f.agentCount())
	require.NoError(t, f.k.Agents().Starting(f.ctx, addr(agentByte)), "stopped for epoch 3 only")
}

func TestInitGenesisRefusesBondsTheModuleAccountDoesNotHold(t *testing.T) {
	gs := agentGenesis()
	k, tc, bank := testutil.KeeperWithBank(t)
	bank.HoldBonds(gs.TransferAgents[:2]) // one bond short
	bank.HoldParticipantBonds(gs.Participants)
	participantBonds := bank.Balances(escrow.ModuleAddress()).AmountOf("stake").Int64() - 4_000_000
	err := k.InitGenesis(tc.Ctx, gs)
	require.ErrorContains(t, err, fmt.Sprintf("bonds sum to %dstake", 5_000_000+participantBonds))
	require.ErrorContains(t, err, escrow.ModuleAddress().String())
	has, err := k.Params.Has(tc.Ctx)
	require.NoError(t, err)
	require.False(t, has, "nothing is stored")

	bank.Fund(escrow.ModuleAddress(), minBond)
	require.NoError(t, k.InitGenesis(tc.Ctx, gs))
}

// Attack (a genesis that halts the chain): an agent at a module account's
// address could never get its bond back, and the boundary that tried would
// fail the block. InitGenesis refuses it.
func TestInitGenesisRefusesAnAgentThatCannotReceiveItsBond(t *testing.T) {
	gs := agentGenesis()
	blocked, err := ac.BytesToString(escrow.ModuleAddress())
	require.NoError(t, err)
	gs.TransferAgents[0].Address = blocked
	k, tc, bank := testutil.KeeperWithBank(t)
	bank.HoldBonds(gs.TransferAgents)
	require.ErrorContains(t, k.InitGenesis(tc.Ctx, gs), "may not receive funds")
}

// testutil.Network registers its agents, so benchmarks and the abci tests
// can start inferences.
func TestNetworkAgentsMayStart(t *testing.T) {
	k, ctx, _ := testutil.Network(t, 2, testParams(), nil)
	for _, a := range testutil.Agents() {
		require.NoError(t, k.Agents().Starting(ctx, a))
	}
}
