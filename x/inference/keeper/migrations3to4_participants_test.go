package keeper_test

import (
	"encoding/binary"
	"slices"
	"testing"

	"cosmossdk.io/math"
	"github.com/stretchr/testify/require"

	sdk "github.com/cosmos/cosmos-sdk/types"

	"github.com/inferenced/inferenced/x/inference/types"
)

// asVersion3 rewrites the fixture's store in the version-3 layout: params
// without the participant-bond fields, and participant records encoded
// without fields 9 (bond) and 10 (leaving_epoch), at legacy self-declared
// weights.
func asVersion3(t *testing.T, f *fixture, weights map[byte]uint64) {
	t.Helper()
	p, err := f.k.Params.Get(f.ctx)
	require.NoError(t, err)
	p.ParticipantMinBond, p.ParticipantBondPerWeight = sdk.Coin{}, math.Int{}
	require.NoError(t, f.k.Params.Set(f.ctx, p))
	for i := byte(1); i <= byte(len(weights)); i++ {
		q := f.participant(i)
		q.Weight = weights[i]
		bz, err := q.Marshal()
		require.NoError(t, err)
		v3 := withoutFields(t, bz, 9, 10)
		require.NoError(t, setRawParticipant(f.ctx, *f.k, addr(i), v3))
		got := f.participant(i)
		require.True(t, got.Bond.Amount.IsNil(), "a version-3 record decodes without a bond")
	}
}

// withoutFields is the protobuf message bz without the given field numbers
// (a record as a binary without those fields wrote it).
func withoutFields(t *testing.T, bz []byte, drop ...uint64) []byte {
	t.Helper()
	var out []byte
	for len(bz) > 0 {
		tag, n := binary.Uvarint(bz)
		require.Positive(t, n)
		size := n
		switch tag & 7 {
		case 0: // varint
			_, m := binary.Uvarint(bz[n:])
			require.Positive(t, m)
			size += m
		case 1: // fixed64
			size += 8
		case 2: // length-delimited
			l, m := binary.Uvarint(bz[n:])
			require.Positive(t, m)
			size += m + int(l)
		case 5: // fixed32
			size += 4
		default:
			t.Fatalf("wire type %d", tag&7)
		}
		if !slices.Contains(drop, tag>>3) {
			out = append(out, bz[:size]...)
		}
		bz = bz[size:]
	}
	return out
}

// lottery capture by self-declared weight carried over an upgrade: a
// version-3 participant at 2^40 serves at the weight the minimum bond backs
// (100 at the defaults) from the next boundary, as does every unbonded one
// above it; none drops out, a newcomer's cheapest registration weighs no
// more, and add_bond raises weight.
func TestMigrateParticipantsTo4CapsUnbondedAtTheMinimumBondsWeight(t *testing.T) {
	f := newFixture(t, withParticipants(gp(1, 100, true, "m"), gp(2, 100, true, "m"), gp(3, 100, true, "m")))
	f.block(1)
	asVersion3(t, f, map[byte]uint64{1: types.MaxParticipantWeight, 2: 150, 3: 1})
	m := newMigrator(*f.k)
	require.NoError(t, m.Migrate3to4(f.ctx))

	params, err := f.k.Params.Get(f.ctx)
	require.NoError(t, err)
	d := types.DefaultParams()
	require.Equal(t, d.ParticipantMinBond, params.ParticipantMinBond)
	require.True(t, d.ParticipantBondPerWeight.Equal(params.ParticipantBondPerWeight))
	legacyCap := types.BackedWeight(params.ParticipantMinBond, params.ParticipantBondPerWeight)
	require.Equal(t, uint64(100), legacyCap)
	for i, want := range []uint64{legacyCap, legacyCap, 1} {
		p := f.participant(byte(i + 1))
		require.Equal(t, want, p.Weight, "participant %d", i+1)
		require.Equal(t, sdk.NewInt64Coin("stake", 0), p.Bond)
	}
	require.Equal(t, uint64(3), f.participantCount(), "no one drops out")
	out, err := f.k.ExportGenesis(f.ctx)
	require.NoError(t, err)
	require.NoError(t, out.Validate(ac), "genesis validate accepts unbonded participants up to the minimum bond's weight")

	// Idempotent: a second run changes nothing.
	require.NoError(t, m.Migrate3to4(f.ctx))
	require.Equal(t, legacyCap, f.participant(1).Weight)

	// Weight above the minimum bond's needs a bond; add_bond brings it
	// without leaving.
	require.ErrorIs(t, f.updateWeight(2, legacyCap+1, sdk.Coin{}), types.ErrInvalidParticipantBond)
	f.bank.Fund(addr(2), perWeight(150))
	require.NoError(t, f.updateWeight(2, 150, perWeight(150)))
	f.advanceTo(1 + testEpochLength)
	weights := map[string]uint64{}
	for _, m := range f.group().Members {
		weights[m.Address] = m.Weight
	}
	require.Equal(t, map[string]uint64{bech(1): legacyCap, bech(2): 150, bech(3): 1}, weights)

	// An unbonded participant can leave; nothing is returned to it.
	_, err = f.deregister(3)
	require.NoError(t, err)
	f.advanceTo(1 + 2*testEpochLength)
	require.False(t, f.isParticipant(3))
	require.True(t, f.bank.Balances(addr(3)).IsZero())
}

// free weight for legacy registrations: an unbonded participant's cap
// follows today's minimum bond, so after governance raises it tenfold a
// sybil carried over from version 3 must not raise its weight for nothing;
// it may lower it, and its first bond is at least the minimum.
func TestUnbondedParticipantCannotRaiseItsWeightForFree(t *testing.T) {
	f := newFixture(t, withParticipants(gp(1, 100, true, "m"), gp(2, 100, true, "m")))
	f.block(1)
	asVersion3(t, f, map[byte]uint64{1: 100, 2: 100})
	require.NoError(t, newMigrator(*f.k).Migrate3to4(f.ctx))
	p, err := f.k.Params.Get(f.ctx)
	require.NoError(t, err)
	p.ParticipantMinBond = stake(10_000_000)
	_, err = f.msg.UpdateParams(f.ctx, &types.MsgUpdateParams{Authority: authority(t), Params: p})
	require.NoError(t, err)
	require.Equal(t, uint64(1000), types.WeightCap(sdk.NewInt64Coin("stake", 0), p), "the unbonded cap followed the minimum bond")

	cases := []struct {
		name    string
		weight  uint64
		addBond sdk.Coin
		mention string
	}{
		// The texts name no module version: the chain may have come from
		// any release before bonds.
		{"raise without a bond", 1000, sdk.Coin{}, "holds no bond (carried over without one by an upgrade) and may not raise its weight above 100"},
		{"first bond below the minimum", 100, perWeight(150), "(carried over without a bond): bond 1500000stake: need at least 10000000stake"},
		{"same weight without a bond", 100, sdk.Coin{}, ""},
		{"lower without a bond", 50, sdk.Coin{}, ""},
		{"raise with a first bond of the minimum", 1000, stake(10_000_000), ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.addBond.Denom != "" {
				f.bank.Fund(addr(1), c.addBond)
			}
			err := f.updateWeight(1, c.weight, c.addBond)
			if c.mention == "" {
				require.NoError(t, err)
				require.Equal(t, c.weight, f.participant(1).Weight)
				return
			}
			require.ErrorIs(t, err, types.ErrInvalidParticipantBond)
			require.ErrorContains(t, err, c.mention)
		})
	}
	require.Equal(t, stake(10_000_000), f.participant(1).Bond)
}

// Params governance set before the upgrade are kept.
func TestMigrateParticipantsTo4KeepsSetBondParams(t *testing.T) {
	f := newFixture(t)
	f.block(1)
	p := testParams()
	p.ParticipantMinBond, p.ParticipantBondPerWeight = sdk.NewInt64Coin("stake", 50), math.NewInt(5)
	require.NoError(t, f.k.Params.Set(f.ctx, p))
	require.NoError(t, newMigrator(*f.k).Migrate3to4(f.ctx))
	got, err := f.k.Params.Get(f.ctx)
	require.NoError(t, err)
	require.Equal(t, p, got)
}
