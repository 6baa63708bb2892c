package keeper_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	sdk "github.com/cosmos/cosmos-sdk/types"

	"github.com/inferenced/inferenced/x/inference/escrow"
	"github.com/inferenced/inferenced/x/inference/testutil"
	"github.com/inferenced/inferenced/x/inference/types"
)

// leavingGenesis is richGenesis with participant 1 (a member) leaving in
// the current epoch, 3, so the boundary that starts epoch 4 (height 150)
// releases it.
func leavingGenesis() types.GenesisState {
	gs := richGenesis()
	gs.Participants[0].LeavingEpoch = 3
	return gs
}

func TestGenesisRoundTripsLeavingParticipants(t *testing.T) {
	k2, ctx2 := requireGenesisRoundTrip(t, leavingGenesis())
	n, err := k2.ParticipantCount.Get(ctx2)
	require.NoError(t, err)
	require.Equal(t, uint64(4), n, "a leaving participant holds its slot")
}

// InitGenesis rebuilds the leaving index: the imported leaving participant
// is released, and its bond returned, at the next boundary.
func TestGenesisRebuildsTheLeavingIndex(t *testing.T) {
	gs := leavingGenesis()
	f := newFixture(t, withGenesis(gs))
	f.height = 125
	f.advanceTo(149)
	require.True(t, f.isParticipant(1))
	require.True(t, f.bank.Balances(addr(1)).IsZero())
	f.block(150)
	require.False(t, f.isParticipant(1))
	require.Equal(t, sdk.NewCoins(gs.Participants[0].Bond), f.bank.Balances(addr(1)))
	require.Equal(t, []string{bech(2), bech(4)}, memberAddrs(f.group()))
	require.Equal(t, uint64(3), f.participantCount())
}

// A genesis whose module account does not hold the participants' bonds is
// refused: a bond it does not hold could never be returned.
func TestInitGenesisRefusesParticipantBondsTheModuleDoesNotHold(t *testing.T) {
	gs := richGenesis()
	k, tc, bank := testutil.KeeperWithBank(t)
	bank.HoldParticipantBonds(gs.Participants[1:]) // participant 1's bond is missing
	err := k.InitGenesis(tc.Ctx, gs)
	require.ErrorContains(t, err, "participants' bonds sum to")
	require.ErrorContains(t, err, escrow.ModuleAddress().String())
	bank.Fund(escrow.ModuleAddress(), gs.Participants[0].Bond)
	require.NoError(t, k.InitGenesis(tc.Ctx, gs))
}
