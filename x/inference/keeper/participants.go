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

// ParticipantFields are the self-declared parts of a registration.
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

// RegisterParticipant registers addr as an ACTIVE participant. It joins the
// epoch group at the next epoch boundary.
func (k Keeper) RegisterParticipant(ctx context.Context, addr sdk.AccAddress, fields ParticipantFields) error {
	fields, err := fields.normalize()
	if err != nil {
		return err
	}
	has, err := k.Participants.Has(ctx, addr)
	if err != nil {
		return fmt.Errorf("look up participant: %w", err)
	}
	if has {
		return errorsmod.Wrapf(types.ErrParticipantExists, "%s; use update-participant to change it", addr)
	}
	if err := k.reserveParticipantSlot(ctx); err != nil {
		return err
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
	}
	if err := k.setParticipant(ctx, p); err != nil {
		return err
	}
	return emitRegistered(ctx, p, false)
}

// UpdateParticipant changes addr's registration; the epoch group keeps the
// snapshot until the next epoch boundary. Status and stats are untouched.
func (k Keeper) UpdateParticipant(ctx context.Context, addr sdk.AccAddress, fields ParticipantFields) error {
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
	p.InferenceUrl = fields.InferenceURL
	p.Models = fields.Models
	p.Weight = fields.Weight
	p.PocAvailable = fields.PocAvailable
	if err := k.setParticipant(ctx, p); err != nil {
		return err
	}
	return emitRegistered(ctx, p, true)
}

func emitRegistered(ctx context.Context, p types.Participant, updated bool) error {
	return sdk.UnwrapSDKContext(ctx).EventManager().EmitTypedEvent(&types.EventParticipantRegistered{
		Address: p.Address, InferenceUrl: p.InferenceUrl, Models: p.Models, Weight: p.Weight, Updated: updated,
	})
}

func (k Keeper) setParticipant(ctx context.Context, p types.Participant) error {
	addr, err := k.addressCodec.StringToBytes(p.Address)
	if err != nil {
		return fmt.Errorf("participant address %q: %w", p.Address, err)
	}
	if err := k.Participants.Set(ctx, addr, p); err != nil {
		return fmt.Errorf("store participant: %w", err)
	}
	return nil
}

// reserveParticipantSlot counts a new participant, refusing it once the
// registry holds max_participants.
func (k Keeper) reserveParticipantSlot(ctx context.Context) error {
	params, err := k.Params.Get(ctx)
	if err != nil {
		return fmt.Errorf("load params: %w", err)
	}
	count, err := k.ParticipantCount.Get(ctx)
	if err != nil && !errors.Is(err, collections.ErrNotFound) {
		return fmt.Errorf("load participant count: %w", err)
	}
	if count >= params.MaxParticipants {
		return errorsmod.Wrapf(types.ErrInvalidParticipant, "the registry is full (max_participants = %d)", params.MaxParticipants)
	}
	if err := k.ParticipantCount.Set(ctx, count+1); err != nil {
		return fmt.Errorf("store participant count: %w", err)
	}
	return nil
}
