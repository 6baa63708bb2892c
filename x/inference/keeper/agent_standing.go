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

// standingIn is s as of epoch index: the counts of any other epoch read as
// zero. This is how standings reset at a boundary without a walk over every
// agent: the first write of an epoch starts from zero.
func standingIn(s types.AgentStanding, index uint64) types.AgentStanding {
	if s.EpochIndex != index {
		return types.AgentStanding{EpochIndex: index}
	}
	return s
}

// mayStart is the one rule for whether an agent's starts are accepted, given
// its standing this epoch: serving (not leaving) and not stopped.
func mayStart(ta types.TransferAgent, now types.AgentStanding) bool {
	return ta.LeavingEpoch == 0 && now.StoppedHeight == 0
}

// agentStarting admits a start by agent and counts it in its standing. It
// refuses an account that is not a registered transfer agent
// (ErrNotTransferAgent), one that asked to leave (ErrAgentLeaving) and one
// stopped for the rest of this epoch (ErrAgentStopped), each saying what the
// sender can do about it.
//
// An admitted start reads no params: they are loaded only to explain a
// refusal, which keeps the per-start cost to the agent record and the epoch.
func (k Keeper) agentStarting(ctx context.Context, agent sdk.AccAddress) error {
	ta, err := k.TransferAgents.Get(ctx, agent)
	if errors.Is(err, collections.ErrNotFound) {
		params, err := k.Params.Get(ctx)
		if err != nil {
			return fmt.Errorf("load params: %w", err)
		}
		return errorsmod.Wrapf(types.ErrNotTransferAgent,
			"%s: register first with MsgRegisterTransferAgent (tx inference register-transfer-agent [bond]) and a bond of at least %s",
			agent, params.TransferAgentMinBond)
	}
	if err != nil {
		return fmt.Errorf("load transfer agent: %w", err)
	}
	epoch, err := k.currentEpoch(ctx)
	if err != nil {
		return err
	}
	now := standingIn(ta.Standing, epoch.Index)
	if ta.LeavingEpoch != 0 {
		return errorsmod.Wrapf(types.ErrAgentLeaving, "%s asked to leave in epoch %d; its bond is returned when epoch %d starts",
			ta.Address, ta.LeavingEpoch, ta.LeavingEpoch+1)
	}
	if !mayStart(ta, now) {
		params, err := k.Params.Get(ctx)
		if err != nil {
			return fmt.Errorf("load params: %w", err)
		}
		return errorsmod.Wrapf(types.ErrAgentStopped,
			"%s: %d charged misses (no attestation backed them) this epoch, over its allowance of %d (%d + %d%% of its %d finished inferences) since height %d; "+
				"its standing resets when epoch %d starts at height %d",
			ta.Address, now.ChargedMisses, params.MissAllowance(now.Finished), params.TransferAgentMissAllowance,
			params.TransferAgentMissAllowancePct, now.Finished, now.StoppedHeight, epoch.Index+1, nextEpochHeight(epoch, params))
	}
	now.Starts++
	ta.Standing = now
	if err := k.TransferAgents.Set(ctx, agent, ta); err != nil {
		return fmt.Errorf("store transfer agent: %w", err)
	}
	return nil
}

// agentFinished counts a finished inference of agent (a bech32 address, as
// types.Inference.TransferAgent holds it); finished inferences raise its miss
// allowance. No-op if the agent no longer exists.
func (k Keeper) agentFinished(ctx context.Context, agent string) error {
	return k.updateStanding(ctx, agent, func(s *types.AgentStanding, _ sdk.Context) error {
		s.Finished++
		return nil
	})
}

// chargeMiss charges agent with one miss of its inferences that no
// attestation backs (held, or backed only by other agents' misses).
// Once its charged misses exceed params.MissAllowance(finished) it
// is stopped: its starts are refused for the rest of the epoch, and
// EventTransferAgentStopped says so once. No-op if the agent no longer
// exists.
func (k Keeper) chargeMiss(ctx context.Context, agent string) error {
	return k.updateStanding(ctx, agent, func(s *types.AgentStanding, sdkCtx sdk.Context) error {
		params, err := k.Params.Get(ctx)
		if err != nil {
			return fmt.Errorf("load params: %w", err)
		}
		s.ChargedMisses++
		allowance := params.MissAllowance(s.Finished)
		if s.ChargedMisses <= allowance || s.StoppedHeight != 0 {
			return nil
		}
		s.StoppedHeight = sdkCtx.BlockHeight()
		sdkCtx.Logger().Debug("transfer agent stopped", "module", types.ModuleName, "agent", agent,
			"misses", s.ChargedMisses, "allowance", allowance)
		return emitAgentEvent(sdkCtx, &types.EventTransferAgentStopped{
			Agent: agent, EpochIndex: s.EpochIndex, ChargedMisses: s.ChargedMisses,
			MissAllowance: allowance, Finished: s.Finished, Height: s.StoppedHeight,
		})
	})
}

// refundMiss turns a charged miss of agent into a corroborated one: it was
// the executor's fault after all. A stopped agent stays stopped for the
// epoch (the stop is sticky, so an agent cannot time its misses around
// refunds). No-op if the agent no longer exists.
func (k Keeper) refundMiss(ctx context.Context, agent string) error {
	return k.updateStanding(ctx, agent, func(s *types.AgentStanding, _ sdk.Context) error {
		if s.ChargedMisses > 0 {
			s.ChargedMisses--
		}
		s.CorroboratedMisses++
		return nil
	})
}

// countCorroborated counts a miss of agent's that was corroborated when
// observed, so it was never charged. No-op if the agent no longer exists.
func (k Keeper) countCorroborated(ctx context.Context, agent string) error {
	return k.updateStanding(ctx, agent, func(s *types.AgentStanding, _ sdk.Context) error {
		s.CorroboratedMisses++
		return nil
	})
}

// updateStanding applies change to agent's standing this epoch and stores
// it. An agent that left (its inferences outlive it) has no standing to
// change, so that is not an error.
func (k Keeper) updateStanding(ctx context.Context, agent string,
	change func(*types.AgentStanding, sdk.Context) error,
) error {
	addr, err := k.addressCodec.StringToBytes(agent)
	if err != nil {
		return fmt.Errorf("transfer agent address %q: %w", agent, err)
	}
	ta, err := k.TransferAgents.Get(ctx, addr)
	if errors.Is(err, collections.ErrNotFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("load transfer agent: %w", err)
	}
	index, err := k.epochIndexOrZero(ctx)
	if err != nil {
		return err
	}
	now := standingIn(ta.Standing, index)
	if err := change(&now, sdk.UnwrapSDKContext(ctx)); err != nil {
		return err
	}
	ta.Standing = now
	if err := k.TransferAgents.Set(ctx, addr, ta); err != nil {
		return fmt.Errorf("store transfer agent: %w", err)
	}
	return nil
}
