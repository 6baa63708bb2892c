package keeper

import (
	"context"
	"fmt"

	"cosmossdk.io/math"

	sdk "github.com/cosmos/cosmos-sdk/types"

	"github.com/inferenced/inferenced/x/inference/types"
)

// migrateParticipantsTo4 is the participants' part of Migrate3to4. A
// version-3 store has no participant bonds: the participant_min_bond and
// participant_bond_per_weight params take their defaults if unset, and
// every participant registered without a bond keeps serving unbonded at
// its weight capped to what the minimum bond backs (types.WeightCap: 100
// at the defaults). So a legacy self-declared weight (up to 2^40) stops
// capturing the lottery at the upgrade, no executor drops out of the
// registry, a newcomer's cheapest registration weighs no more than a
// legacy executor, and an operator raises weight with MsgUpdateParticipant's
// add_bond. The current epoch group is a snapshot
// and keeps its weights until the next boundary. Running it again changes
// nothing.
//
// It checks only its own params (the rest of Migrate3to4 fills and checks
// the others) and walks the registry once, bounded by max_participants.
func (m Migrator) migrateParticipantsTo4(ctx context.Context) error {
	p, err := m.k.Params.Get(ctx)
	if err != nil {
		return fmt.Errorf("load params: %w", err)
	}
	fillParticipantBonds(&p)
	if err := p.ValidateParticipantBonds(); err != nil {
		return fmt.Errorf("migrated params: %w", err)
	}
	if err := m.k.Params.Set(ctx, p); err != nil {
		return fmt.Errorf("store migrated params: %w", err)
	}
	var unbonded []types.Participant
	if err := m.k.Participants.Walk(ctx, nil, func(_ sdk.AccAddress, q types.Participant) (bool, error) {
		if types.Unbonded(q.Bond) {
			unbonded = append(unbonded, q)
		}
		return false, nil
	}); err != nil {
		return fmt.Errorf("walk participants: %w", err)
	}
	for _, q := range unbonded {
		q.Bond = sdk.NewCoin(p.ParticipantBondDenom(), math.ZeroInt())
		q.Weight = max(min(q.Weight, types.WeightCap(q.Bond, p)), 1)
		if err := m.k.setParticipant(ctx, q); err != nil {
			return err
		}
	}
	sdk.UnwrapSDKContext(ctx).Logger().Debug("participants migrated to version 4", "module", types.ModuleName, "unbonded", len(unbonded))
	return nil
}

// fillParticipantBonds gives the participant bond params, which a store
// written before version 4 lacks (unset, never valid), their defaults.
func fillParticipantBonds(p *types.Params) {
	d := types.DefaultParams()
	if p.ParticipantMinBond.Denom == "" || p.ParticipantMinBond.Amount.IsNil() {
		p.ParticipantMinBond = d.ParticipantMinBond
	}
	if p.ParticipantBondPerWeight.IsNil() || p.ParticipantBondPerWeight.IsZero() {
		p.ParticipantBondPerWeight = d.ParticipantBondPerWeight
	}
}
