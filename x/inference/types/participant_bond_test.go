package types_test

import (
	"testing"

	"cosmossdk.io/math"
	"github.com/stretchr/testify/require"

	sdk "github.com/cosmos/cosmos-sdk/types"

	"github.com/inferenced/inferenced/x/inference/types"
)

func stake(n int64) sdk.Coin { return sdk.NewInt64Coin(types.DefaultParticipantBondDenom, n) }

func TestBackedWeightIsWholeUnitsOfTheBondCapped(t *testing.T) {
	per := math.NewInt(types.DefaultParticipantBondPerWeight)
	cases := []struct {
		name string
		bond sdk.Coin
		want uint64
	}{
		{"zero", stake(0), 0},
		{"below one unit", stake(9_999), 0},
		{"one unit", stake(10_000), 1},
		{"rounds down", stake(1_019_999), 101},
		{"nil amount", sdk.Coin{Denom: "stake"}, 0},
		{"far above the weight cap", sdk.NewCoin("stake", math.NewIntFromUint64(types.MaxParticipantWeight).Mul(per).MulRaw(1000)), types.MaxParticipantWeight},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { require.Equal(t, c.want, types.BackedWeight(c.bond, per)) })
	}
	require.Zero(t, types.BackedWeight(stake(10_000), math.ZeroInt()), "a non-positive unit backs nothing")
}

func TestDefaultBondsBackTheLocalnetWeights(t *testing.T) {
	p := types.DefaultParams()
	// scripts/localnet.sh gives executor j weight 100 + 10j.
	for _, w := range []uint64{100, 110, 1000, 100 + 10*999} {
		bond := types.BondForWeight(w, p)
		require.False(t, bond.IsLT(p.ParticipantMinBond), "weight %d: bond %s below the minimum", w, bond)
		require.NoError(t, types.CheckBackedWeight(w, bond, p))
		require.Error(t, types.CheckBackedWeight(w+1, bond, p))
	}
}

func TestCheckBackedWeight(t *testing.T) {
	p := types.DefaultParams()
	cases := []struct {
		name    string
		weight  uint64
		bond    sdk.Coin
		mention string
	}{
		{"exactly backed", 100, stake(1_000_000), ""},
		{"under backed", 1, stake(1_000_000), ""},
		{"lottery capture by self-declared weight: one unit over", 101, stake(1_000_000), "needs a bond of 1010000stake"},
		{"wrong denom", 1, sdk.NewInt64Coin("uatom", 1_000_000), "must be in stake"},
		{"unbonded (from version 3) at the minimum bond's weight", 100, stake(0), ""},
		{"unbonded above the minimum bond's weight", 101, stake(0), "backs weight 100"},
		{"a bond governance made smaller than one unit serves at weight 1", 1, stake(9_999), ""},
		{"a bond smaller than one unit above weight 1", 2, stake(9_999), "backs weight 1"},
		{"invalid coin", 1, sdk.Coin{Denom: "", Amount: math.OneInt()}, "bond"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := types.CheckBackedWeight(c.weight, c.bond, p)
			if c.mention == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorContains(t, err, c.mention)
		})
	}
}

func TestParticipantBondParamsValidate(t *testing.T) {
	cases := []struct {
		name    string
		edit    func(*types.Params)
		mention string
	}{
		{"min bond equals one unit", func(p *types.Params) { p.ParticipantMinBond = stake(10_000) }, ""},
		{"min bond below one unit", func(p *types.Params) { p.ParticipantMinBond = stake(9_999) }, "backs weight >= 1"},
		{"min bond zero", func(p *types.Params) { p.ParticipantMinBond = stake(0) }, "participant_min_bond must be positive"},
		{"min bond bad denom", func(p *types.Params) { p.ParticipantMinBond = sdk.Coin{Denom: "1x", Amount: math.OneInt()} }, "invalid denom"},
		{"per weight zero", func(p *types.Params) { p.ParticipantBondPerWeight = math.ZeroInt() }, "participant_bond_per_weight must be positive"},
		{"per weight unset", func(p *types.Params) { p.ParticipantBondPerWeight = math.Int{} }, "participant_bond_per_weight must be positive"},
		{"per weight negative", func(p *types.Params) { p.ParticipantBondPerWeight = math.NewInt(-1) }, "participant_bond_per_weight must be positive"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := types.DefaultParams()
			c.edit(&p)
			err := p.Validate()
			if c.mention == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorContains(t, err, c.mention)
		})
	}
}

func TestGenesisValidatesParticipantBonds(t *testing.T) {
	cases := []struct {
		name    string
		edit    func(*types.GenesisState)
		mention string
	}{
		{"wrong denom", func(gs *types.GenesisState) { gs.Participants[0].Bond = sdk.NewInt64Coin("uatom", 10_000) }, "must be in stake"},
		{"weight over bond", func(gs *types.GenesisState) { gs.Participants[1].Weight = 3 }, "needs a bond"},
		{"leaving in a past epoch", func(gs *types.GenesisState) { gs.Participants[0].LeavingEpoch = 1 }, "leaving_epoch 1"},
		{"leaving in a future epoch", func(gs *types.GenesisState) { gs.Participants[0].LeavingEpoch = 3 }, "leaving_epoch 3"},
		{"leaving now", func(gs *types.GenesisState) { gs.Participants[0].LeavingEpoch = 2 }, ""},
		{"unbonded at weight 1 (carried over from version 3)", func(gs *types.GenesisState) { gs.Participants[0].Bond = stake(0) }, ""},
		{"departed executor's inference", func(gs *types.GenesisState) { gs.Inferences[0].Executor = bech(9) }, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			gs := validGenesis()
			c.edit(&gs)
			err := gs.Validate(ac)
			if c.mention == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorContains(t, err, c.mention)
		})
	}
}

// lotteryWeight is the honest total weight of n executors weighted as
// scripts/localnet.sh weights them (100 + 10j).
func lotteryWeight(n uint64) uint64 { return 100*n + 10*n*(n-1)/2 }

// TestCaptureBond is the cost of lottery capture by bonded weight: the bond
// an account needs for a share of the draws against an honest network
// (docs/architecture.md, "Backed weight", prints this table).
func TestCaptureBond(t *testing.T) {
	p := types.DefaultParams()
	cases := []struct {
		name       string
		pct        uint64
		honest     uint64
		wantWeight uint64
		wantBond   int64
	}{
		{"localnet 10%", 10, lotteryWeight(6), 84, 1_000_000}, // 840,000 is below the minimum bond
		{"localnet 50%", 50, lotteryWeight(6), 750, 7_500_000},
		{"localnet 90%", 90, lotteryWeight(6), 6_750, 67_500_000},
		{"1,000 executors 10%", 10, lotteryWeight(1000), 566_112, 5_661_120_000},
		{"1,000 executors 50%", 50, lotteryWeight(1000), 5_095_000, 50_950_000_000},
		{"1,000 executors 90%", 90, lotteryWeight(1000), 45_855_000, 458_550_000_000},
	}
	require.Equal(t, uint64(750), lotteryWeight(6))
	require.Equal(t, uint64(5_095_000), lotteryWeight(1000))
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w, bond := types.CaptureBond(c.pct, c.honest, p)
			require.Equal(t, c.wantWeight, w)
			require.Equal(t, stake(c.wantBond), bond)
			// w is the least weight that reaches the share: w-1 does not.
			require.GreaterOrEqual(t, w*100, c.pct*(c.honest+w))
			require.Less(t, (w-1)*100, c.pct*(c.honest+w-1))
			require.NoError(t, types.CheckBackedWeight(w, bond, p), "the bond backs the weight")
		})
	}
	w, _ := types.CaptureBond(100, 750, p)
	require.Zero(t, w, "all of the draws is out of reach while anyone honest serves")
}
