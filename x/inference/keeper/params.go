package keeper

import (
	"context"
	"fmt"

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
	return k.SetParams(ctx, params)
}
