package v4

import (
	"context"
	"fmt"

	"cosmossdk.io/math"

	sdk "github.com/cosmos/cosmos-sdk/types"

	"github.com/inferenced/inferenced/x/inference/keeper"
	"github.com/inferenced/inferenced/x/inference/migrations"
	"github.com/inferenced/inferenced/x/inference/types"
)

// migrateParticipants is the participants' part of Migrate. A version-3
// store has no participant bonds: the participant_min_bond and
// participant_bond_per_weight params take their defaults if unset, and
// every participant registered without a bond keeps serving unbonded at
// its weight capped to what the minimum bond backs (types.WeightCap: 100
// at the defaults). So a legacy self-declared weight (up to 2^40) stops
// capturing the lottery at the upgrade, no executor drops out of the
// registry, a newcomer's cheapest registration weighs no more than a
// legacy executor, and an operator raises weight with MsgUpdateParticipant's
// add_bond. The current epoch group is a snapshot and keeps its weights
// until the next boundary. Running it again changes nothing.
//
// It checks only its own params (the rest of Migrate fills and checks
// the others) and walks the registry once, bounded by max_participants.
func migrateParticipants(ctx context.Context, k keeper.Keeper) error {
	p, err := k.Params.Get(ctx)
	if err != nil {
		return fmt.Errorf("load params: %w", err)
	}
	migrations.FillParticipantBonds(&p)
	if err := p.ValidateParticipantBonds(); err != nil {
		return fmt.Errorf("migrated params: %w", err)
	}
	if err := k.Params.Set(ctx, p); err != nil {
		return fmt.Errorf("store migrated params: %w", err)
	}
	var unbonded []types.Participant
	if err := k.Participants.Walk(ctx, nil, func(_ sdk.AccAddress, q types.Participant) (bool, error) {
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
		if err := k.SetParticipant(ctx, q); err != nil {
			return err
		}
	}
	sdk.UnwrapSDKContext(ctx).Logger().Debug("participants migrated to version 4", "module", types.ModuleName, "unbonded", len(unbonded))
	return nil
}
