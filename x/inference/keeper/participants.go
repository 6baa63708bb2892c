package keeper

import (
	"context"
	"errors"
	"fmt"

	"cosmossdk.io/collections"
	errorsmod "cosmossdk.io/errors"

	sdk "github.com/cosmos/cosmos-sdk/types"

	"github.com/inferenced/inferenced/x/inference/types"
)

// ParticipantFields are the self-declared parts of a registration. Weight
// is declared too, but may not exceed what the bond backs
// (types.CheckBackedWeight).
type ParticipantFields struct {
	InferenceURL string
	Models       []string
	Weight       uint64
	PocAvailable bool
}

func (f ParticipantFields) normalize() (ParticipantFields, error) {
	if err := types.ValidateInferenceURL(f.InferenceURL); err != nil {
		return f, errorsmod.Wrap(types.ErrInvalidParticipant, err.Error())
	}
	models, err := types.NormalizeModels(f.Models)
	if err != nil {
		return f, errorsmod.Wrap(types.ErrInvalidParticipant, err.Error())
	}
	if err := types.ValidateWeight(f.Weight); err != nil {
		return f, errorsmod.Wrap(types.ErrInvalidParticipant, err.Error())
	}
	if f.Weight == 0 {
		return f, errorsmod.Wrap(types.ErrInvalidParticipant, "weight must be >= 1: a weight-0 executor is never drawn")
	}
	f.Models = models
	return f, nil
}

// RegisterParticipant registers addr as an ACTIVE participant against bond,
// which moves from addr to the module account: at least
// participant_min_bond, in its denom, backing fields.Weight. It joins the
// epoch group at the next epoch boundary.
func (k Keeper) RegisterParticipant(ctx context.Context, addr sdk.AccAddress, fields ParticipantFields, bond sdk.Coin) error {
	fields, err := fields.normalize()
	if err != nil {
		return err
	}
	params, err := k.Params.Get(ctx)
	if err != nil {
		return fmt.Errorf("load params: %w", err)
	}
	if err := types.CheckParticipantMinBond(bond, params); err != nil {
		return errorsmod.Wrap(types.ErrInvalidParticipantBond, err.Error())
	}
	if err := types.CheckBackedWeight(fields.Weight, bond, params); err != nil {
		return errorsmod.Wrap(types.ErrInvalidParticipantBond, err.Error())
	}
	existing, err := k.Participants.Get(ctx, addr)
	switch {
	case err == nil && existing.LeavingEpoch != 0:
		return errorsmod.Wrapf(types.ErrParticipantLeaving, "%s is leaving; register again once epoch %d has started and returned its bond",
			existing.Address, existing.LeavingEpoch+1)
	case err == nil:
		return errorsmod.Wrapf(types.ErrParticipantExists, "%s; use update-participant to change it", existing.Address)
	case !errors.Is(err, collections.ErrNotFound):
		return fmt.Errorf("look up participant: %w", err)
	}
	count, err := k.freeParticipantSlot(ctx, params)
	if err != nil {
		return err
	}
	if err := k.escrow.Lock(ctx, addr, bond, "participant"); err != nil {
		return err
	}
	if err := k.ParticipantCount.Set(ctx, count+1); err != nil {
		return fmt.Errorf("store participant count: %w", err)
	}
	addrStr, err := k.addressCodec.BytesToString(addr)
	if err != nil {
		return fmt.Errorf("encode address: %w", err)
	}
	p := types.Participant{
		Address:          addrStr,
		InferenceUrl:     fields.InferenceURL,
		Models:           fields.Models,
		Weight:           fields.Weight,
		PocAvailable:     fields.PocAvailable,
		Status:           types.PARTICIPANT_STATUS_ACTIVE,
		RegisteredHeight: sdk.UnwrapSDKContext(ctx).BlockHeight(),
		Bond:             bond,
	}
	if err := k.SetParticipant(ctx, p); err != nil {
		return err
	}
	return emitRegistered(ctx, p, false)
}

// UpdateParticipant changes addr's registration and adds addBond (zero
// amount for none) to its bond; the new weight must be within the new
// bond. The epoch group keeps the snapshot until the next epoch boundary.
// Status and stats are untouched. A leaving participant may not update:
// it serves out its epoch as it is.
func (k Keeper) UpdateParticipant(ctx context.Context, addr sdk.AccAddress, fields ParticipantFields, addBond sdk.Coin) error {
	fields, err := fields.normalize()
	if err != nil {
		return err
	}
	p, err := k.Participants.Get(ctx, addr)
	if errors.Is(err, collections.ErrNotFound) {
		return errorsmod.Wrapf(types.ErrParticipantNotFound, "%s; register it first", addr)
	}
	if err != nil {
		return fmt.Errorf("load participant: %w", err)
	}
	if p.LeavingEpoch != 0 {
		return errorsmod.Wrapf(types.ErrParticipantLeaving, "%s asked to leave in epoch %d and may no longer change its registration",
			p.Address, p.LeavingEpoch)
	}
	params, err := k.Params.Get(ctx)
	if err != nil {
		return fmt.Errorf("load params: %w", err)
	}
	bond, adding, err := addedBond(p.Bond, addBond, params)
	if err != nil {
		return err
	}
	if err := checkUnbondedUpdate(p, fields.Weight, bond, params); err != nil {
		return err
	}
	if err := types.CheckBackedWeight(fields.Weight, bond, params); err != nil {
		return errorsmod.Wrapf(types.ErrInvalidParticipantBond, "%s; add the difference with add_bond", err)
	}
	if adding {
		if err := k.escrow.Lock(ctx, addr, addBond, "participant"); err != nil {
			return err
		}
	}
	p.InferenceUrl = fields.InferenceURL
	p.Models = fields.Models
	p.Weight = fields.Weight
	p.PocAvailable = fields.PocAvailable
	p.Bond = bond
	if err := k.SetParticipant(ctx, p); err != nil {
		return err
	}
	return emitRegistered(ctx, p, true)
}

// checkUnbondedUpdate holds an unbonded participant (carried over from
// version 3) to the weight the migration left it: its cap follows today's
// minimum bond, so without this a governance raise of participant_min_bond
// (or a cut of the per-weight) would let every free legacy registration
// raise its weight for nothing. It may lower its weight; to raise it, it
// bonds, and its first bond is at least participant_min_bond, as a
// registration's is.
func checkUnbondedUpdate(p types.Participant, weight uint64, bond sdk.Coin, params types.Params) error {
	if !types.Unbonded(p.Bond) {
		return nil
	}
	if types.Unbonded(bond) {
		if weight > p.Weight {
			return errorsmod.Wrapf(types.ErrInvalidParticipantBond,
				"%s holds no bond (carried over without one by an upgrade) and may not raise its weight above %d; add a bond of at least %s with add_bond",
				p.Address, p.Weight, params.ParticipantMinBond)
		}
		return nil
	}
	if err := types.CheckParticipantMinBond(bond, params); err != nil {
		return errorsmod.Wrapf(types.ErrInvalidParticipantBond, "first bond of %s (carried over without a bond): %s", p.Address, err)
	}
	return nil
}

// addedBond is bond plus add, and whether add adds anything. A zero add
// (any denom, or none) adds nothing; otherwise it must be a valid coin of
// the participant bond denom.
func addedBond(bond, add sdk.Coin, params types.Params) (sdk.Coin, bool, error) {
	if types.Unbonded(add) {
		return bond, false, nil
	}
	denom := params.ParticipantBondDenom()
	if err := add.Validate(); err != nil || add.Denom != denom {
		return bond, false, errorsmod.Wrapf(types.ErrInvalidParticipantBond, "add_bond %s must be a positive amount of %s", add, denom)
	}
	if types.Unbonded(bond) { // carried over from version 3
		return add, true, nil
	}
	if bond.Denom != denom {
		return bond, false, errorsmod.Wrapf(types.ErrInvalidParticipantBond, "bond %s is not in the bond denom %s", bond, denom)
	}
	return bond.Add(add), true, nil
}

func emitRegistered(ctx context.Context, p types.Participant, updated bool) error {
	return types.EmitEvent(ctx, &types.EventParticipantRegistered{
		Address: p.Address, InferenceUrl: p.InferenceUrl, Models: p.Models, Weight: p.Weight, Updated: updated, Bond: p.Bond,
	})
}

// SetParticipant stores p under its address. Its callers keep the rules
// (bonded weight, the count, the leaving index); it only writes.
func (k Keeper) SetParticipant(ctx context.Context, p types.Participant) error {
	addr, err := k.addressCodec.StringToBytes(p.Address)
	if err != nil {
		return fmt.Errorf("participant address %q: %w", p.Address, err)
	}
	if err := k.Participants.Set(ctx, addr, p); err != nil {
		return fmt.Errorf("store participant: %w", err)
	}
	return nil
}

// freeParticipantSlot returns the registry's size, refusing a new
// participant once it holds max_participants. Leaving participants hold
// their slot until the boundary releases them.
func (k Keeper) freeParticipantSlot(ctx context.Context, params types.Params) (uint64, error) {
	count, err := k.ParticipantCount.Get(ctx)
	if err != nil && !errors.Is(err, collections.ErrNotFound) {
		return 0, fmt.Errorf("load participant count: %w", err)
	}
	if count >= params.MaxParticipants {
		return 0, errorsmod.Wrapf(types.ErrParticipantRegistryFull, "%d participants registered (max_participants = %d); a slot frees when one leaves",
			count, params.MaxParticipants)
	}
	return count, nil
}
