package keeper

import (
	"context"
	"errors"
	"fmt"

	"cosmossdk.io/collections"
	errorsmod "cosmossdk.io/errors"
	"github.com/cosmos/gogoproto/proto"

	sdk "github.com/cosmos/cosmos-sdk/types"
	authtypes "github.com/cosmos/cosmos-sdk/x/auth/types"

	"github.com/inferenced/inferenced/x/inference/types"
)

// ModuleAccountAddress is the x/inference module account, which holds the
// transfer-agent bonds.
func ModuleAccountAddress() sdk.AccAddress { return authtypes.NewModuleAddress(types.ModuleName) }

// epochIndexOrZero is the current epoch index, 0 before the first block
// (genesis transactions run then).
func (k Keeper) epochIndexOrZero(ctx context.Context) (uint64, error) {
	epoch, err := k.currentEpoch(ctx)
	if errors.Is(err, types.ErrNoEpoch) {
		return 0, nil
	}
	return epoch.Index, err
}

// RegisterTransferAgent lets addr start inferences against bond, which
// moves from addr to the module account. The bond must be in the denom of
// transfer_agent_min_bond and at least its amount.
func (k Keeper) RegisterTransferAgent(ctx context.Context, addr sdk.AccAddress, bond sdk.Coin) error {
	params, err := k.Params.Get(ctx)
	if err != nil {
		return fmt.Errorf("load params: %w", err)
	}
	minBond := params.TransferAgentMinBond
	if bond.Denom != minBond.Denom || bond.Amount.IsNil() || bond.Amount.LT(minBond.Amount) {
		return errorsmod.Wrapf(types.ErrInvalidBond, "bond %s: need at least %s (transfer_agent_min_bond), in %s",
			bond, minBond, minBond.Denom)
	}
	existing, err := k.TransferAgents.Get(ctx, addr)
	switch {
	case err == nil && existing.LeavingEpoch != 0:
		return errorsmod.Wrapf(types.ErrAgentExists, "%s is leaving; register again once epoch %d has started and returned its bond",
			existing.Address, existing.LeavingEpoch+1)
	case err == nil:
		return errorsmod.Wrapf(types.ErrAgentExists, "%s", existing.Address)
	case !errors.Is(err, collections.ErrNotFound):
		return fmt.Errorf("load transfer agent: %w", err)
	}
	count, err := k.TransferAgentCount.Get(ctx)
	if err != nil && !errors.Is(err, collections.ErrNotFound) {
		return fmt.Errorf("load transfer agent count: %w", err)
	}
	if count >= params.MaxTransferAgents {
		return errorsmod.Wrapf(types.ErrTooManyAgents, "%d agents registered (max_transfer_agents = %d)", count, params.MaxTransferAgents)
	}
	if err := k.lockBond(ctx, addr, bond, "transfer-agent"); err != nil {
		return err
	}
	addrStr, err := k.addressCodec.BytesToString(addr)
	if err != nil {
		return fmt.Errorf("encode address: %w", err)
	}
	epoch, err := k.epochIndexOrZero(ctx)
	if err != nil {
		return err
	}
	ta := types.TransferAgent{
		Address: addrStr, Bond: bond, RegisteredEpoch: epoch,
		Standing: types.AgentStanding{EpochIndex: epoch},
	}
	if err := k.TransferAgents.Set(ctx, addr, ta); err != nil {
		return fmt.Errorf("store transfer agent: %w", err)
	}
	if err := k.TransferAgentCount.Set(ctx, count+1); err != nil {
		return fmt.Errorf("store transfer agent count: %w", err)
	}
	sdk.UnwrapSDKContext(ctx).Logger().Debug("transfer agent registered", "module", types.ModuleName, "agent", addrStr, "bond", bond)
	return emitAgentEvent(ctx, &types.EventTransferAgentRegistered{Agent: addrStr, Bond: bond, EpochIndex: epoch})
}

// LeaveTransferAgent stops addr's starts now and schedules its bond's return
// for the start of the next epoch, whose index it returns. Inferences it
// already started run to their end.
func (k Keeper) LeaveTransferAgent(ctx context.Context, addr sdk.AccAddress) (uint64, error) {
	ta, err := k.TransferAgents.Get(ctx, addr)
	if errors.Is(err, collections.ErrNotFound) {
		return 0, errorsmod.Wrapf(types.ErrNotTransferAgent, "%s", addr)
	}
	if err != nil {
		return 0, fmt.Errorf("load transfer agent: %w", err)
	}
	if ta.LeavingEpoch != 0 {
		return 0, errorsmod.Wrapf(types.ErrAgentLeaving, "%s asked to leave in epoch %d; its bond is returned when epoch %d starts",
			ta.Address, ta.LeavingEpoch, ta.LeavingEpoch+1)
	}
	current, release, err := k.scheduleLeave(ctx, k.LeavingAgents, addr)
	if err != nil {
		return 0, err
	}
	ta.LeavingEpoch = current
	if err := k.TransferAgents.Set(ctx, addr, ta); err != nil {
		return 0, fmt.Errorf("store transfer agent: %w", err)
	}
	sdk.UnwrapSDKContext(ctx).Logger().Debug("transfer agent leaving", "module", types.ModuleName, "agent", ta.Address, "release_epoch", release)
	return release, emitAgentEvent(ctx, &types.EventTransferAgentLeaving{Agent: ta.Address, ReleaseEpoch: release})
}

// releaseLeavingAgents is the boundary that starts epoch index: it returns
// the bonds of exactly the agents keyed index in LeavingAgents and deletes
// them. A failed return is an invariant breach (the module account covers
// every bond, blocked addresses never register), so it fails the block.
func (k Keeper) releaseLeavingAgents(ctx context.Context, index uint64) error {
	_, err := k.releaseDue(ctx, k.LeavingAgents, k.TransferAgentCount, index, "transfer agent", func(addr sdk.AccAddress) error {
		ta, err := k.TransferAgents.Get(ctx, addr)
		if err != nil {
			return fmt.Errorf("load transfer agent: %w", err)
		}
		if err := k.returnBond(ctx, addr, ta.Bond); err != nil {
			return err
		}
		if err := k.TransferAgents.Remove(ctx, addr); err != nil {
			return fmt.Errorf("remove transfer agent: %w", err)
		}
		return emitAgentEvent(ctx, &types.EventTransferAgentLeft{Agent: ta.Address, Bond: ta.Bond, EpochIndex: index})
	})
	return err
}

// emitAgentEvent emits a typed event, naming its type if that fails.
func emitAgentEvent(ctx context.Context, ev proto.Message) error {
	if err := sdk.UnwrapSDKContext(ctx).EventManager().EmitTypedEvent(ev); err != nil {
		return fmt.Errorf("emit %s: %w", proto.MessageName(ev), err)
	}
	return nil
}
