package keeper_test

import (
	"testing"

	"cosmossdk.io/math"
	"github.com/stretchr/testify/require"

	sdk "github.com/cosmos/cosmos-sdk/types"

	"github.com/inferenced/inferenced/x/inference/keeper"
	"github.com/inferenced/inferenced/x/inference/types"
)

// asVersion3 rewrites the fixture's store in the version-3 layout: params
// without the participant-bond fields and participants without a bond
// (fields 9 and 10 absent decode as zero values), at legacy self-declared
// weights.
func asVersion3(t *testing.T, f *fixture, weights map[byte]uint64) {
	t.Helper()
	p, err := f.k.Params.Get(f.ctx)
	require.NoError(t, err)
	p.ParticipantMinBond, p.ParticipantBondPerWeight = sdk.Coin{}, math.Int{}
	require.NoError(t, f.k.Params.Set(f.ctx, p))
	for i := byte(1); i <= byte(len(weights)); i++ {
		q := f.participant(i)
		q.Bond, q.Weight = sdk.Coin{}, weights[i]
		require.NoError(t, f.k.Participants.Set(f.ctx, addr(i), q))
	}
}

// lottery capture by self-declared weight carried over an upgrade: a
// version-3 participant at 2^40 serves at weight 1 from the next boundary,
// as does every unbonded one; none drops out, and add_bond restores weight.
func TestMigrateParticipantsTo4ServesUnbondedAtWeightOne(t *testing.T) {
	f := newFixture(t, withParticipants(gp(1, 100, true, "m"), gp(2, 100, true, "m"), gp(3, 100, true, "m")))
	f.block(1)
	asVersion3(t, f, map[byte]uint64{1: types.MaxParticipantWeight, 2: 150, 3: 1})
	m := keeper.NewMigrator(*f.k)
	require.NoError(t, m.MigrateParticipantsTo4(f.ctx))

	params, err := f.k.Params.Get(f.ctx)
	require.NoError(t, err)
	d := types.DefaultParams()
	require.Equal(t, d.ParticipantMinBond, params.ParticipantMinBond)
	require.True(t, d.ParticipantBondPerWeight.Equal(params.ParticipantBondPerWeight))
	for i := byte(1); i <= 3; i++ {
		p := f.participant(i)
		require.Equal(t, uint64(1), p.Weight, "participant %d", i)
		require.Equal(t, sdk.NewInt64Coin("stake", 0), p.Bond)
	}
	require.Equal(t, uint64(3), f.participantCount(), "no one drops out")
	out, err := f.k.ExportGenesis(f.ctx)
	require.NoError(t, err)
	require.NoError(t, out.Validate(ac), "genesis validate accepts unbonded participants at weight 1")

	// Idempotent: a second run changes nothing.
	require.NoError(t, m.MigrateParticipantsTo4(f.ctx))
	require.Equal(t, uint64(1), f.participant(1).Weight)

	// Weight above 1 needs a bond; add_bond brings it back without leaving.
	require.ErrorIs(t, f.updateWeight(2, 2, sdk.Coin{}), types.ErrInvalidParticipantBond)
	f.bank.Fund(addr(2), perWeight(150))
	require.NoError(t, f.updateWeight(2, 150, perWeight(150)))
	f.advanceTo(1 + testEpochLength)
	weights := map[string]uint64{}
	for _, m := range f.group().Members {
		weights[m.Address] = m.Weight
	}
	require.Equal(t, map[string]uint64{bech(1): 1, bech(2): 150, bech(3): 1}, weights)

	// An unbonded participant can leave; nothing is returned to it.
	_, err = f.deregister(3)
	require.NoError(t, err)
	f.advanceTo(1 + 2*testEpochLength)
	require.False(t, f.isParticipant(3))
	require.True(t, f.bank.Balances(addr(3)).IsZero())
}

// Params governance set before the upgrade are kept.
func TestMigrateParticipantsTo4KeepsSetBondParams(t *testing.T) {
	f := newFixture(t)
	f.block(1)
	p := testParams()
	p.ParticipantMinBond, p.ParticipantBondPerWeight = sdk.NewInt64Coin("stake", 50), math.NewInt(5)
	require.NoError(t, f.k.Params.Set(f.ctx, p))
	require.NoError(t, keeper.NewMigrator(*f.k).MigrateParticipantsTo4(f.ctx))
	got, err := f.k.Params.Get(f.ctx)
	require.NoError(t, err)
	require.Equal(t, p, got)
}
