package keeper

import (
	"context"
	"errors"
	"fmt"

	errorsmod "cosmossdk.io/errors"

	sdk "github.com/cosmos/cosmos-sdk/types"

	"github.com/inferenced/inferenced/x/inference/selection"
	"github.com/inferenced/inferenced/x/inference/types"
)

// RouteContext reads what admission needs as of the block at height.
func (k Keeper) RouteContext(ctx context.Context, height int64) (selection.Context, error) {
	params, err := k.Params.Get(ctx)
	if err != nil {
		return selection.Context{}, fmt.Errorf("load params: %w", err)
	}
	epoch, err := k.currentEpoch(ctx)
	if err != nil {
		return selection.Context{}, err
	}
	return selection.Context{InPocPhase: params.InPocPhase(epoch, height)}, nil
}

// MemberStatus reads a member's participant record for its status.
func (k Keeper) MemberStatus(ctx context.Context, m types.EpochMember) (types.ParticipantStatus, error) {
	addr, err := k.addressCodec.StringToBytes(m.Address)
	if err != nil {
		return 0, fmt.Errorf("epoch member address %q: %w", m.Address, err)
	}
	p, err := k.Participants.Get(ctx, addr)
	if err != nil {
		return 0, fmt.Errorf("executor %s: %w", m.Address, err)
	}
	return p.Status, nil
}

// HealthFilter is the circuit breaker as selection's health stage at
// height, or nil in shadow mode (health_cb_enforce false), when selection
// ignores the breaker.
func (k Keeper) HealthFilter(ctx context.Context, height int64) (selection.Filter, error) {
	params, err := k.Params.Get(ctx)
	if err != nil {
		return nil, fmt.Errorf("health stage: load params: %w", err)
	}
	if !params.HealthCbEnforce {
		return nil, nil
	}
	return func(pool []types.Candidate) ([]types.Candidate, error) {
		return k.breaker.Filter(ctx, height, pool)
	}, nil
}

// WalkGroupError is how a fault met while walking the group is reported.
func WalkGroupError(err error) error { return fmt.Errorf("walk epoch group: %w", err) }

// Candidates runs the whole filter chain for a model, as of the block at
// height (x/inference/selection), reading the group and each member's
// status from the store.
func (k Keeper) Candidates(ctx context.Context, model string, height int64) (selection.Selection, error) {
	if err := types.ValidateModel(model); err != nil {
		return selection.Selection{}, errorsmod.Wrap(types.ErrNoExecutor, err.Error())
	}
	rc, err := k.RouteContext(ctx, height)
	if err != nil {
		return selection.Selection{}, err
	}
	status := func(m types.EpochMember) (types.ParticipantStatus, error) { return k.MemberStatus(ctx, m) }
	pool, err := selection.Pool(rc, model, status, func(admit func(types.EpochMember) error) error {
		return k.EpochMembers.Walk(ctx, nil, func(_ uint32, m types.EpochMember) (bool, error) {
			err := admit(m)
			return err != nil, err
		})
	})
	if err != nil {
		return selection.Selection{}, WalkGroupError(err)
	}
	if len(pool) == 0 {
		return selection.Selection{}, selection.NoExecutor(model)
	}
	filter, err := k.HealthFilter(ctx, height)
	if err != nil {
		return selection.Selection{}, err
	}
	return selection.Health(model, pool, filter)
}

// RandomExecutor draws an executor for model with the seed, for a start that
// will execute in the block at height. The same state and seed always give
// the same executor.
func (k Keeper) RandomExecutor(ctx context.Context, model string, seed uint64, height int64) (selection.Draw, error) {
	sel, err := k.Candidates(ctx, model, height)
	if err != nil {
		return selection.Draw{}, err
	}
	return selection.DrawFrom(sel, seed)
}

// CheckRoutable refuses, with the reason, an executor that selection could
// not have picked for model in this block. An executor the health stage
// refuses is still routable while the fallback is active for the model
// (the breaker excluded every candidate), as selection offers it then.
func (k Keeper) CheckRoutable(ctx context.Context, executor sdk.AccAddress, model string) error {
	member, isMember, err := k.memberOf(ctx, executor)
	if err != nil {
		return err
	}
	if !isMember {
		return errorsmod.Wrapf(types.ErrExecutorNotRoutable, "%s is not in the current epoch group", executor)
	}
	height := sdk.UnwrapSDKContext(ctx).BlockHeight()
	rc, err := k.RouteContext(ctx, height)
	if err != nil {
		return err
	}
	status := func(m types.EpochMember) (types.ParticipantStatus, error) { return k.MemberStatus(ctx, m) }
	switch err := selection.Admit(rc, member, model, status); {
	case selection.IsRefusal(err):
		return errorsmod.Wrap(types.ErrExecutorNotRoutable, err.Error())
	case err != nil:
		return err
	}
	params, err := k.Params.Get(ctx)
	if err != nil {
		return fmt.Errorf("load params: %w", err)
	}
	if !params.HealthCbEnforce {
		return nil
	}
	refused := k.breaker.CheckStart(ctx, executor)
	if refused == nil {
		return nil
	}
	if !errors.Is(refused, types.ErrExecutorNotRoutable) {
		return refused
	}
	// Rare (selection never offers it), so the full chain only runs here.
	sel, err := k.Candidates(ctx, model, height)
	if err != nil {
		return err
	}
	if sel.Fallback {
		return nil
	}
	return refused
}
