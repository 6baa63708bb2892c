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

// SetParams validates and stores params; invalid params store nothing.
func (k Keeper) SetParams(ctx context.Context, params types.Params) error {
	if err := params.Validate(); err != nil {
		return errorsmod.Wrap(types.ErrInvalidParams, err.Error())
	}
	if err := k.Params.Set(ctx, params); err != nil {
		return fmt.Errorf("store params: %w", err)
	}
	return sdk.UnwrapSDKContext(ctx).EventManager().EmitTypedEvent(&types.EventParamsUpdated{Params: params})
}

// UpdateParams is governance's params change: SetParams after the guard on
// the participant-bond params (checkParticipantBondParams).
func (k Keeper) UpdateParams(ctx context.Context, params types.Params) error {
	if err := params.Validate(); err != nil {
		return errorsmod.Wrap(types.ErrInvalidParams, err.Error())
	}
	old, err := k.Params.Get(ctx)
	if err != nil {
		return fmt.Errorf("load params: %w", err)
	}
	if err := k.checkParticipantBondParams(ctx, old, params); err != nil {
		return err
	}
	if err := k.checkRegistrySizes(ctx, params); err != nil {
		return err
	}
	return k.SetParams(ctx, params)
}

// checkRegistrySizes refuses a max_participants or max_transfer_agents
// below the registry's size (leaving holders included until released):
// nobody can be evicted, and genesis Validate refuses a registry larger
// than its max, so such a chain could not be exported and imported again
// (found by make test-sim; TestRegistryShrunkBelowItsSizeWouldBreakExport).
// Governance lowers the max once enough holders have left.
func (k Keeper) checkRegistrySizes(ctx context.Context, params types.Params) error {
	participants, err := k.ParticipantCount.Get(ctx)
	if err != nil && !errors.Is(err, collections.ErrNotFound) {
		return fmt.Errorf("load participant count: %w", err)
	}
	if participants > params.MaxParticipants {
		return errorsmod.Wrapf(types.ErrInvalidParams, "max_participants %d is below the %d registered participants; lower it once they have left",
			params.MaxParticipants, participants)
	}
	agents, err := k.agents.Count(ctx)
	if err != nil {
		return err
	}
	if agents > params.MaxTransferAgents {
		return errorsmod.Wrapf(types.ErrInvalidParams, "max_transfer_agents %d is below the %d registered transfer agents; lower it once they have left",
			params.MaxTransferAgents, agents)
	}
	return nil
}
