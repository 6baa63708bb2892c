package agents

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

// Register lets addr start inferences against bond, which moves from addr
// to the module account. The bond must be in the denom of
// transfer_agent_min_bond and at least its amount.
func (s Store) Register(ctx context.Context, addr sdk.AccAddress, bond sdk.Coin) error {
	params, err := s.reads.Params(ctx)
	if err != nil {
		return fmt.Errorf("load params: %w", err)
	}
	minBond := params.TransferAgentMinBond
	if bond.Denom != minBond.Denom || bond.Amount.IsNil() || bond.Amount.LT(minBond.Amount) {
		return errorsmod.Wrapf(types.ErrInvalidBond, "bond %s: need at least %s (transfer_agent_min_bond), in %s",
			bond, minBond, minBond.Denom)
	}
	existing, err := s.agents.Get(ctx, addr)
	switch {
	case err == nil && existing.LeavingEpoch != 0:
		return errorsmod.Wrapf(types.ErrAgentExists, "%s is leaving; register again once epoch %d has started and returned its bond",
			existing.Address, existing.LeavingEpoch+1)
	case err == nil:
		return errorsmod.Wrapf(types.ErrAgentExists, "%s", existing.Address)
	case !errors.Is(err, collections.ErrNotFound):
		return fmt.Errorf("load transfer agent: %w", err)
	}
	count, err := s.Count(ctx)
	if err != nil {
		return err
	}
	if count >= params.MaxTransferAgents {
		return errorsmod.Wrapf(types.ErrTooManyAgents, "%d agents registered (max_transfer_agents = %d)", count, params.MaxTransferAgents)
	}
	if err := s.escrow.Lock(ctx, addr, bond, "transfer-agent"); err != nil {
		return err
	}
	addrStr, err := s.ac.BytesToString(addr)
	if err != nil {
		return fmt.Errorf("encode address: %w", err)
	}
	epoch, err := s.epochIndexOrZero(ctx)
	if err != nil {
		return err
	}
	ta := types.TransferAgent{
		Address: addrStr, Bond: bond, RegisteredEpoch: epoch,
		Standing: types.AgentStanding{EpochIndex: epoch},
	}
	if err := s.agents.Set(ctx, addr, ta); err != nil {
		return fmt.Errorf("store transfer agent: %w", err)
	}
	if err := s.count.Set(ctx, count+1); err != nil {
		return fmt.Errorf("store transfer agent count: %w", err)
	}
	sdk.UnwrapSDKContext(ctx).Logger().Debug("transfer agent registered", "module", types.ModuleName, "agent", addrStr, "bond", bond)
	return types.EmitEvent(ctx, &types.EventTransferAgentRegistered{Agent: addrStr, Bond: bond, EpochIndex: epoch})
}

// Leave stops addr's starts now and schedules its bond's return for the
// start of the next epoch, whose index it returns. Inferences it already
// started run to their end.
func (s Store) Leave(ctx context.Context, addr sdk.AccAddress) (uint64, error) {
	ta, err := s.agents.Get(ctx, addr)
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
	epoch, err := s.reads.Epoch(ctx)
	if err != nil {
		return 0, errorsmod.Wrap(err, "leave after the first block")
	}
	release, err := escrow.Schedule(ctx, s.leaving, epoch.Index, addr)
	if err != nil {
		return 0, err
	}
	ta.LeavingEpoch = epoch.Index
	if err := s.agents.Set(ctx, addr, ta); err != nil {
		return 0, fmt.Errorf("store transfer agent: %w", err)
	}
	sdk.UnwrapSDKContext(ctx).Logger().Debug("transfer agent leaving", "module", types.ModuleName, "agent", ta.Address, "release_epoch", release)
	return release, types.EmitEvent(ctx, &types.EventTransferAgentLeaving{Agent: ta.Address, ReleaseEpoch: release})
}

// ReleaseLeaving is the boundary that starts epoch index: it returns the
// bonds of exactly the agents keyed index in the leaving index and deletes
// them. A failed return is an invariant breach (the module account covers
// every bond, blocked addresses never register), so it fails the block.
func (s Store) ReleaseLeaving(ctx context.Context, index uint64) error {
	_, err := escrow.ReleaseDue(ctx, s.leaving, s.count, index, "transfer agent", func(addr sdk.AccAddress) error {
		ta, err := s.agents.Get(ctx, addr)
		if err != nil {
			return fmt.Errorf("load transfer agent: %w", err)
		}
		if err := s.escrow.Return(ctx, addr, ta.Bond); err != nil {
			return err
		}
		if err := s.agents.Remove(ctx, addr); err != nil {
			return fmt.Errorf("remove transfer agent: %w", err)
		}
		return types.EmitEvent(ctx, &types.EventTransferAgentLeft{Agent: ta.Address, Bond: ta.Bond, EpochIndex: index})
	})
	return err
}
