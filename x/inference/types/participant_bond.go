package types

import (
	"fmt"

	"cosmossdk.io/math"

	sdk "github.com/cosmos/cosmos-sdk/types"
)

// Participant-bond defaults. One weight unit costs 10,000stake, so the
// localnet and e2e executors (weights 100 + 10j) bond 1,000,000stake and up;
// the minimum bond backs weight 100, the smallest localnet weight, and makes
// filling the default registry of 10,000 slots cost 10^10stake.
const (
	DefaultParticipantBondDenom           = DefaultTransferAgentBondDenom
	DefaultParticipantBondPerWeight int64 = 10_000
	DefaultParticipantMinBondAmount int64 = 1_000_000
)

// Unbonded reports a participant bond of nothing: only a participant
// carried over from module version 3 holds one (registration needs at
// least participant_min_bond).
func Unbonded(bond sdk.Coin) bool { return bond.Amount.IsNil() || !bond.Amount.IsPositive() }

// ParticipantBondDenom is the denom participants bond in.
func (p Params) ParticipantBondDenom() string { return p.ParticipantMinBond.Denom }

// BackedWeight is the lottery weight bond backs: whole units of perWeight
// in bond, capped at MaxParticipantWeight. The denom is checked by
// CheckBackedWeight; a non-positive perWeight backs nothing.
func BackedWeight(bond sdk.Coin, perWeight math.Int) uint64 {
	if Unbonded(bond) || perWeight.IsNil() || !perWeight.IsPositive() {
		return 0
	}
	units := bond.Amount.Quo(perWeight)
	if !units.IsUint64() || units.Uint64() > MaxParticipantWeight {
		return MaxParticipantWeight
	}
	return units.Uint64()
}

// BondForWeight is the smallest bond that backs weight.
func BondForWeight(weight uint64, p Params) sdk.Coin {
	return sdk.NewCoin(p.ParticipantBondDenom(), p.ParticipantBondPerWeight.Mul(math.NewIntFromUint64(weight)))
}

// WeightCap is the largest weight a participant with bond may serve at,
// the one rule tying weight to bond: the weight its bond backs, and at
// least 1 (a bond governance made smaller than one unit still serves at
// the minimum weight, it is not dropped). An unbonded participant (carried
// over from version 3, see migrateParticipantsTo4) counts as holding the
// minimum bond: it keeps what a newcomer gets for the cheapest
// registration, so the upgrade neither drops it nor lets a newcomer outweigh
// the whole legacy registry.
func WeightCap(bond sdk.Coin, p Params) uint64 {
	if Unbonded(bond) {
		bond = p.ParticipantMinBond
	}
	return max(BackedWeight(bond, p.ParticipantBondPerWeight), 1)
}

// CheckParticipantMinBond refuses a registration bond below
// participant_min_bond or in another denom (registration and
// add-genesis-participant; genesis Validate does not, as governance may
// have raised the minimum since a participant registered).
func CheckParticipantMinBond(bond sdk.Coin, p Params) error {
	minBond := p.ParticipantMinBond
	if bond.Denom != minBond.Denom || bond.Amount.IsNil() || bond.Amount.LT(minBond.Amount) {
		return fmt.Errorf("bond %s: need at least %s (participant_min_bond), in %s", bond, minBond, minBond.Denom)
	}
	return nil
}

// CheckBackedWeight is the one rule tying a participant's weight to its
// bond, used by registration, update, genesis and the CLI: the bond is in
// the participant bond denom and weight is at most WeightCap.
func CheckBackedWeight(weight uint64, bond sdk.Coin, p Params) error {
	if err := bond.Validate(); err != nil {
		return fmt.Errorf("bond %s: %w", bond, err)
	}
	if denom := p.ParticipantBondDenom(); bond.Denom != denom {
		return fmt.Errorf("bond %s must be in %s, the denom of participant_min_bond", bond, denom)
	}
	if limit := WeightCap(bond, p); weight > limit {
		return fmt.Errorf("weight %d needs a bond of %s (participant_bond_per_weight %s%s per unit); bond %s backs weight %d",
			weight, BondForWeight(weight, p), p.ParticipantBondPerWeight, p.ParticipantBondDenom(), bond, limit)
	}
	return nil
}

// ValidateParticipantBonds checks the participant-bond params: a valid
// denom, a positive per-weight amount and a minimum bond that backs at
// least weight 1, so every registration carries weight.
func (p Params) ValidateParticipantBonds() error {
	min, per := p.ParticipantMinBond, p.ParticipantBondPerWeight
	switch {
	case sdk.ValidateDenom(min.Denom) != nil:
		return fmt.Errorf("participant_min_bond: invalid denom %q: %v", min.Denom, sdk.ValidateDenom(min.Denom))
	case min.Amount.IsNil() || !min.Amount.IsPositive():
		return fmt.Errorf("participant_min_bond must be positive, got %s", min)
	case per.IsNil() || !per.IsPositive():
		return fmt.Errorf("participant_bond_per_weight must be positive, got %v", per)
	case min.Amount.LT(per):
		return fmt.Errorf("participant_min_bond %s must be at least participant_bond_per_weight %s%s, so every registration backs weight >= 1",
			min, per, min.Denom)
	}
	return nil
}

// CaptureBond is the bond an account needs for share pct (percent, 1..99)
// of the lottery against honest total weight: weight w with
// w / (honest + w) >= pct/100, that is w = ceil(pct*honest / (100-pct)),
// at least one minimum bond, and capped at MaxParticipantWeight. Splitting w
// over many registrations costs the same, as weight is linear in bond.
func CaptureBond(pct uint64, honest uint64, p Params) (uint64, sdk.Coin) {
	if pct == 0 || pct >= 100 {
		return 0, sdk.NewCoin(p.ParticipantBondDenom(), math.ZeroInt())
	}
	num := math.NewIntFromUint64(pct).Mul(math.NewIntFromUint64(honest))
	den := math.NewIntFromUint64(100 - pct)
	units := num.Add(den).Sub(math.OneInt()).Quo(den)
	if !units.IsUint64() || units.Uint64() > MaxParticipantWeight {
		units = math.NewIntFromUint64(MaxParticipantWeight)
	}
	w := units.Uint64()
	bond := BondForWeight(w, p)
	if bond.Amount.LT(p.ParticipantMinBond.Amount) {
		bond.Amount = p.ParticipantMinBond.Amount
	}
	return w, bond
}
