package keeper

import (
	"context"
	"errors"
	"fmt"

	"cosmossdk.io/collections"
	errorsmod "cosmossdk.io/errors"

	sdk "github.com/cosmos/cosmos-sdk/types"

	"github.com/inferenced/inferenced/x/inference/escrow"
	"github.com/inferenced/inferenced/x/inference/types"
)

// DeregisterParticipant marks addr as leaving in the current epoch and
// returns the epoch whose start releases it. It stays in the current epoch
// group (members are a snapshot) and keeps its registry slot and bond until
// then; the boundary that starts the release epoch leaves it out of the new
// group, deletes its record, returns its bond and frees its slot.
func (k Keeper) DeregisterParticipant(ctx context.Context, addr sdk.AccAddress) (uint64, error) {
	p, err := k.Participants.Get(ctx, addr)
	if errors.Is(err, collections.ErrNotFound) {
		return 0, errorsmod.Wrapf(types.ErrParticipantNotFound, "%s", addr)
	}
	if err != nil {
		return 0, fmt.Errorf("load participant: %w", err)
	}
	if p.LeavingEpoch != 0 {
		return 0, errorsmod.Wrapf(types.ErrParticipantLeaving, "%s asked to leave in epoch %d; it is released when epoch %d starts",
			p.Address, p.LeavingEpoch, p.LeavingEpoch+1)
	}
	epoch, err := k.currentEpoch(ctx)
	if err != nil {
		return 0, errorsmod.Wrap(err, "leave after the first block")
	}
	release, err := escrow.Schedule(ctx, k.LeavingParticipants, epoch.Index, addr)
	if err != nil {
		return 0, err
	}
	p.LeavingEpoch = epoch.Index
	if err := k.SetParticipant(ctx, p); err != nil {
		return 0, err
	}
	sdk.UnwrapSDKContext(ctx).Logger().Debug("participant leaving", "module", types.ModuleName, "address", p.Address, "release_epoch", release)
	return release, types.EmitEvent(ctx, &types.EventParticipantLeaving{Address: p.Address, ReleaseEpoch: release})
}

// releaseLeavingParticipants is the part of the boundary that starts epoch
// index, run before the new group is built: exactly the participants keyed
// index in LeavingParticipants are deleted and get their bonds back. Their
// in-flight inferences still close (countOutcome counts no stats for them).
func (k Keeper) releaseLeavingParticipants(ctx context.Context, index uint64) error {
	_, err := escrow.ReleaseDue(ctx, k.LeavingParticipants, k.ParticipantCount, index, "participant", func(addr sdk.AccAddress) error {
		p, err := k.Participants.Get(ctx, addr)
		if err != nil {
			return fmt.Errorf("load participant: %w", err)
		}
		if err := k.escrow.Return(ctx, addr, p.Bond); err != nil {
			return err
		}
		if err := k.Participants.Remove(ctx, addr); err != nil {
			return fmt.Errorf("remove participant: %w", err)
		}
		return types.EmitEvent(ctx, &types.EventParticipantLeft{Address: p.Address, Bond: p.Bond, EpochIndex: index})
	})
	return err
}

// checkParticipantBondParams is governance's guard on the bond params:
// the bond denom may not change while participants hold bonds in it (they
// could never be matched against the new denom), and a higher
// participant_bond_per_weight (or a lower minimum bond, for the unbonded)
// lowers each participant's weight to types.WeightCap, so weight never
// exceeds what the bond backs. The walk is bounded by
// max_participants and runs only on a params change.
func (k Keeper) checkParticipantBondParams(ctx context.Context, old, params types.Params) error {
	if old.ParticipantBondDenom() != params.ParticipantBondDenom() {
		count, err := k.ParticipantCount.Get(ctx)
		if err != nil && !errors.Is(err, collections.ErrNotFound) {
			return fmt.Errorf("load participant count: %w", err)
		}
		if count > 0 {
			return errorsmod.Wrapf(types.ErrInvalidParams, "participant_min_bond denom %s -> %s: %d participants hold bonds in %s",
				old.ParticipantBondDenom(), params.ParticipantBondDenom(), count, old.ParticipantBondDenom())
		}
	}
	// A larger per-weight lowers every bond's cap, a smaller minimum bond
	// the unbonded ones' (types.WeightCap).
	perWeightUp := old.ParticipantBondPerWeight.IsNil() || params.ParticipantBondPerWeight.GT(old.ParticipantBondPerWeight)
	minDown := old.ParticipantMinBond.Amount.IsNil() || params.ParticipantMinBond.Amount.LT(old.ParticipantMinBond.Amount)
	if !perWeightUp && !minDown {
		return nil
	}
	var lowered []types.Participant
	if err := k.Participants.Walk(ctx, nil, func(_ sdk.AccAddress, p types.Participant) (bool, error) {
		if limit := types.WeightCap(p.Bond, params); p.Weight > limit {
			p.Weight = limit
			lowered = append(lowered, p)
		}
		return false, nil
	}); err != nil {
		return fmt.Errorf("walk participants: %w", err)
	}
	for _, p := range lowered {
		if err := k.SetParticipant(ctx, p); err != nil {
			return err
		}
	}
	return nil
}
