package keeper_test

import (
	"errors"
	"testing"

	"cosmossdk.io/collections"
	"github.com/stretchr/testify/require"

	sdk "github.com/cosmos/cosmos-sdk/types"
	sdkerrors "github.com/cosmos/cosmos-sdk/types/errors"
	authtypes "github.com/cosmos/cosmos-sdk/x/auth/types"

	"github.com/inferenced/inferenced/x/inference/escrow"
	"github.com/inferenced/inferenced/x/inference/types"
)

// newAgentByte is an account the fixture funds but does not register.
const newAgentByte = 0xC1

func stake(n int64) sdk.Coin { return sdk.NewInt64Coin(types.DefaultTransferAgentBondDenom, n) }

var minBond = stake(types.DefaultTransferAgentMinBondAmount)

func (f *fixture) registerAgent(i byte, bond sdk.Coin) error {
	_, err := f.msg.RegisterTransferAgent(f.ctx, &types.MsgRegisterTransferAgent{Creator: bech(i), Bond: bond})
	return err
}

func (f *fixture) leaveAgent(i byte) (uint64, error) {
	resp, err := f.msg.LeaveTransferAgent(f.ctx, &types.MsgLeaveTransferAgent{Creator: bech(i)})
	if err != nil {
		return 0, err
	}
	return resp.ReleaseEpoch, nil
}

func (f *fixture) agent(i byte) types.TransferAgent {
	f.t.Helper()
	ta, err := f.k.Agents().Get(f.ctx, addr(i))
	require.NoError(f.t, err)
	return ta
}

func (f *fixture) agentCount() uint64 {
	f.t.Helper()
	n, err := f.k.Agents().Count(f.ctx)
	require.NoError(f.t, err)
	return n
}

func (f *fixture) held() sdk.Coins { return f.bank.Balances(escrow.ModuleAddress()) }

// isAgent reports whether addr(i) is a registered transfer agent.
func (f *fixture) isAgent(i byte) bool {
	f.t.Helper()
	_, err := f.k.Agents().Get(f.ctx, addr(i))
	if errors.Is(err, collections.ErrNotFound) {
		return false
	}
	require.NoError(f.t, err)
	return true
}

func TestRegisterTransferAgentLocksBondAndStoresAgent(t *testing.T) {
	f := newFixture(t)
	f.block(1)
	f.bank.Fund(addr(newAgentByte), stake(5_000_000))
	before := f.held()

	bond := stake(2_000_000) // more than the minimum is accepted and locked whole
	require.NoError(t, f.registerAgent(newAgentByte, bond))
	require.Equal(t, sdk.NewCoins(stake(3_000_000)), f.bank.Balances(addr(newAgentByte)))
	require.Equal(t, before.Add(bond), f.held())
	require.Equal(t, types.TransferAgent{
		Address: bech(newAgentByte), Bond: bond, RegisteredEpoch: 1, Standing: types.AgentStanding{EpochIndex: 1},
	}, f.agent(newAgentByte))
	require.Equal(t, uint64(3), f.agentCount())
	require.Equal(t, []*types.EventTransferAgentRegistered{{Agent: bech(newAgentByte), Bond: bond, EpochIndex: 1}},
		typedEvents[*types.EventTransferAgentRegistered](t, f.ctx))
	require.NoError(t, f.k.Agents().Starting(f.ctx, addr(newAgentByte)), "a registered agent may start at once")
}

func TestRegisterTransferAgentRefusesBondBelowMinimum(t *testing.T) {
	for _, tc := range []struct {
		name string
		bond sdk.Coin
	}{
		{"one below the minimum", stake(types.DefaultTransferAgentMinBondAmount - 1)},
		{"zero", stake(0)},
		{"the minimum amount in another denom", sdk.NewInt64Coin("uatom", types.DefaultTransferAgentMinBondAmount)},
		{"no amount", sdk.Coin{Denom: types.DefaultTransferAgentBondDenom}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			f.block(1)
			f.bank.Fund(addr(newAgentByte), stake(5_000_000), sdk.NewInt64Coin("uatom", 5_000_000))
			before := f.held()
			err := f.registerAgent(newAgentByte, tc.bond)
			require.ErrorIs(t, err, types.ErrInvalidBond)
			require.Contains(t, err.Error(), minBond.String(), "the error names the minimum")
			require.Equal(t, before, f.held(), "nothing is locked")
			require.False(t, f.isAgent(newAgentByte))
			require.Equal(t, uint64(2), f.agentCount())
		})
	}
}

func TestRegisterTransferAgentRefusesTwice(t *testing.T) {
	f := newFixture(t)
	f.block(1)
	f.bank.Fund(addr(agentByte), stake(5_000_000))
	require.ErrorIs(t, f.registerAgent(agentByte, minBond), types.ErrAgentExists)

	_, err := f.leaveAgent(agentByte)
	require.NoError(t, err)
	err = f.registerAgent(agentByte, minBond)
	require.ErrorIs(t, err, types.ErrAgentExists, "a leaving agent registers again only after its release")
	require.Contains(t, err.Error(), "epoch 2")
	require.Equal(t, sdk.NewCoins(stake(5_000_000)), f.bank.Balances(addr(agentByte)))
}

func TestRegisterTransferAgentRefusesUnfundedAccount(t *testing.T) {
	f := newFixture(t)
	f.block(1)
	f.bank.Fund(addr(newAgentByte), stake(types.DefaultTransferAgentMinBondAmount-1))
	require.ErrorIs(t, f.registerAgent(newAgentByte, minBond), sdkerrors.ErrInsufficientFunds)
	require.False(t, f.isAgent(newAgentByte))
}

// Attack: governance (or any module) registers a module account, which can
// never receive its bond back: the release boundary would fail every block.
func TestAttackModuleAccountCannotRegister(t *testing.T) {
	f := newFixture(t)
	f.block(1)
	module := authtypes.NewModuleAddress(types.ModuleName)
	err := f.k.Agents().Register(f.ctx, module, minBond)
	require.ErrorIs(t, err, sdkerrors.ErrUnauthorized)
}

// Attack: a funded attacker fills the registry with cheap agents so that
// honest ones cannot register; the registry stops at max_transfer_agents
// (each slot costs a bond) and frees a slot only when an agent has left.
func TestAttackFullRegistryRefusesNewAgent(t *testing.T) {
	p := testParams()
	p.MaxTransferAgents = 3
	f := newFixture(t, withParams(p))
	f.block(1)
	for _, i := range []byte{0xC1, 0xC2} {
		f.bank.Fund(addr(i), minBond)
	}
	require.NoError(t, f.registerAgent(0xC1, minBond))
	err := f.registerAgent(0xC2, minBond)
	require.ErrorIs(t, err, types.ErrTooManyAgents)
	require.Contains(t, err.Error(), "max_transfer_agents = 3")
	require.Equal(t, uint64(3), f.agentCount())

	_, err = f.leaveAgent(0xC1)
	require.NoError(t, err)
	require.ErrorIs(t, f.registerAgent(0xC2, minBond), types.ErrTooManyAgents, "a leaving agent holds its slot until released")
	f.advanceTo(testEpochLength + 1) // epoch 2 starts and releases 0xC1
	require.Equal(t, uint64(2), f.agentCount())
	require.NoError(t, f.registerAgent(0xC2, minBond))
}

func TestLeavingAgentGetsBondBackAtNextEpoch(t *testing.T) {
	f := newFixture(t)
	f.block(1)
	f.bank.Fund(addr(newAgentByte), minBond)
	require.NoError(t, f.registerAgent(newAgentByte, minBond))
	f.advanceTo(20)

	release, err := f.leaveAgent(newAgentByte)
	require.NoError(t, err)
	require.Equal(t, uint64(2), release)
	require.Equal(t, []*types.EventTransferAgentLeaving{{Agent: bech(newAgentByte), ReleaseEpoch: 2}},
		typedEvents[*types.EventTransferAgentLeaving](t, f.ctx))
	require.Equal(t, uint64(1), f.agent(newAgentByte).LeavingEpoch)
	require.ErrorIs(t, f.k.Agents().Starting(f.ctx, addr(newAgentByte)), types.ErrAgentLeaving, "it stops starting at once")
	_, err = f.leaveAgent(newAgentByte)
	require.ErrorIs(t, err, types.ErrAgentLeaving)

	f.advanceTo(testEpochLength) // the last block of epoch 1: the bond is still held
	require.True(t, f.bank.Balances(addr(newAgentByte)).IsZero())
	require.Equal(t, uint64(3), f.agentCount())

	f.begin(testEpochLength + 1) // epoch 2 starts
	require.Equal(t, uint64(2), mustEpoch(t, f).Index)
	require.Equal(t, sdk.NewCoins(minBond), f.bank.Balances(addr(newAgentByte)))
	require.Equal(t, sdk.NewCoins(stake(2*types.DefaultTransferAgentMinBondAmount)), f.held(), "the genesis agents' bonds stay")
	require.False(t, f.isAgent(newAgentByte))
	require.Equal(t, uint64(2), f.agentCount())
	require.Equal(t, []*types.EventTransferAgentLeft{{Agent: bech(newAgentByte), Bond: minBond, EpochIndex: 2}},
		typedEvents[*types.EventTransferAgentLeft](t, f.ctx))
	requireNoLeavingAgents(t, f)
	require.ErrorIs(t, f.k.Agents().Starting(f.ctx, addr(newAgentByte)), types.ErrNotTransferAgent)
	f.end()

	// It may register again, with a fresh standing.
	require.NoError(t, f.registerAgent(newAgentByte, minBond))
	require.Equal(t, uint64(2), f.agent(newAgentByte).RegisteredEpoch)
}

// The boundary returns the bonds of the agents keyed with its epoch only:
// an agent leaving in epoch 2 is not released by the start of epoch 2.
func TestBoundaryReleasesOnlyTheAgentsKeyedWithItsEpoch(t *testing.T) {
	f := newFixture(t)
	f.block(1)
	_, err := f.leaveAgent(agentByte)
	require.NoError(t, err)
	f.advanceTo(testEpochLength + 1)
	_, err = f.leaveAgent(secondAgentByte)
	require.NoError(t, err)
	f.advanceTo(testEpochLength + 2)
	require.Equal(t, uint64(2), f.agent(secondAgentByte).LeavingEpoch)
	require.Equal(t, sdk.NewCoins(minBond), f.bank.Balances(addr(agentByte)))
	require.True(t, f.bank.Balances(addr(secondAgentByte)).IsZero())
	f.advanceTo(2*testEpochLength + 1)
	require.Equal(t, sdk.NewCoins(minBond), f.bank.Balances(addr(secondAgentByte)))
	require.True(t, f.held().IsZero())
	require.Equal(t, uint64(0), f.agentCount())
}

func TestLeaveTransferAgentRefusesUnregisteredAndBeforeFirstEpoch(t *testing.T) {
	f := newFixture(t)
	_, err := f.leaveAgent(agentByte)
	require.ErrorIs(t, err, types.ErrNoEpoch, "leaving_epoch 0 means serving: no leave before epoch 1")
	f.block(1)
	_, err = f.leaveAgent(newAgentByte)
	require.ErrorIs(t, err, types.ErrNotTransferAgent)
	_, err = f.msg.LeaveTransferAgent(f.ctx, &types.MsgLeaveTransferAgent{Creator: "infer1bad"})
	require.ErrorIs(t, err, sdkerrors.ErrInvalidAddress)
}

// Genesis transactions run before epoch 1: an agent registered then is in
// epoch 0 and may start once epoch 1 has begun.
func TestRegisterTransferAgentBeforeFirstEpoch(t *testing.T) {
	f := newFixture(t)
	f.bank.Fund(addr(newAgentByte), minBond)
	require.NoError(t, f.registerAgent(newAgentByte, minBond))
	require.Equal(t, uint64(0), f.agent(newAgentByte).RegisteredEpoch)
	f.block(1)
	require.NoError(t, f.k.Agents().Starting(f.ctx, addr(newAgentByte)))
	require.Equal(t, types.AgentStanding{EpochIndex: 1, Starts: 1}, f.agent(newAgentByte).Standing)
}

// requireNoLeavingAgents: no agent is leaving, so (Invariants) the leaving
// index is empty.
func requireNoLeavingAgents(t *testing.T, f *fixture) {
	t.Helper()
	require.NoError(t, f.k.Agents().Invariants(f.ctx))
	resp, err := f.query.TransferAgents(f.ctx, &types.QueryTransferAgentsRequest{})
	require.NoError(t, err)
	for _, v := range resp.Agents {
		require.Zero(t, v.Agent.LeavingEpoch, "%s is leaving", v.Agent.Address)
	}
}
