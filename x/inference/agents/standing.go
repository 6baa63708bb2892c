package agents

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

// View is ta as the queries show it: its standing as of epoch index (zero
// if stale) and what that standing allows.
func View(ta types.TransferAgent, params types.Params, index uint64) types.TransferAgentView {
	ta.Standing = standingIn(ta.Standing, index)
	return types.TransferAgentView{
		Agent:         ta,
		MissAllowance: params.MissAllowance(ta.Standing.Finished),
		MayStart:      mayStart(ta, ta.Standing),
	}
}

// Starting admits a start by agent and counts it in its standing. It
// refuses an account that is not a registered transfer agent
// (ErrNotTransferAgent), one that asked to leave (ErrAgentLeaving) and one
// stopped for the rest of this epoch (ErrAgentStopped), each saying what the
// sender can do about it.
//
// An admitted start reads no params: they are loaded only to explain a
// refusal, which keeps the per-start cost to the agent record and the epoch.
func (s Store) Starting(ctx context.Context, agent sdk.AccAddress) error {
	ta, err := s.agents.Get(ctx, agent)
	if errors.Is(err, collections.ErrNotFound) {
		params, err := s.reads.Params(ctx)
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
	epoch, err := s.reads.Epoch(ctx)
	if err != nil {
		return err
	}
	now := standingIn(ta.Standing, epoch.Index)
	if ta.LeavingEpoch != 0 {
		return errorsmod.Wrapf(types.ErrAgentLeaving, "%s asked to leave in epoch %d; its bond is returned when epoch %d starts",
			ta.Address, ta.LeavingEpoch, ta.LeavingEpoch+1)
	}
	if !mayStart(ta, now) {
		params, err := s.reads.Params(ctx)
		if err != nil {
			return fmt.Errorf("load params: %w", err)
		}
		return errorsmod.Wrapf(types.ErrAgentStopped,
			"%s: %d charged misses (no attestation backed them) this epoch, over its allowance of %d (%d + %d%% of its %d finished inferences) since height %d; "+
				"its standing resets when epoch %d starts at height %d",
			ta.Address, now.ChargedMisses, params.MissAllowance(now.Finished), params.TransferAgentMissAllowance,
			params.TransferAgentMissAllowancePct, now.Finished, now.StoppedHeight, epoch.Index+1, params.NextEpochHeight(epoch))
	}
	now.Starts++
	ta.Standing = now
	if err := s.agents.Set(ctx, agent, ta); err != nil {
		return fmt.Errorf("store transfer agent: %w", err)
	}
	return nil
}

// Finished counts a finished inference of agent (a bech32 address, as
// types.Inference.TransferAgent holds it); finished inferences raise its
// miss allowance. No-op if the agent no longer exists.
func (s Store) Finished(ctx context.Context, agent string) error {
	return s.update(ctx, agent, func(st *types.AgentStanding, _ sdk.Context) error {
		st.Finished++
		return nil
	})
}

// Judged records what the breaker's judgement of one of agent's misses
// does to its standing (judge.Standing): charge +1 charges it a miss no
// attestation backs, and once its charged misses exceed
// params.MissAllowance(finished) it is stopped (its starts are refused for
// the rest of the epoch; EventTransferAgentStopped says so once); charge -1
// refunds one (it was the executor's fault after all; a stopped agent stays
// stopped, so an agent cannot time its misses around refunds);
// corroborated counts the miss as the executor's. No-op if the agent no
// longer exists, or if the miss names no agent (queued before agents were
// recorded, on an upgraded chain).
func (s Store) Judged(ctx context.Context, agent string, charge int, corroborated bool) error {
	if agent == "" || (charge == 0 && !corroborated) {
		return nil
	}
	return s.update(ctx, agent, func(st *types.AgentStanding, sdkCtx sdk.Context) error {
		if corroborated {
			st.CorroboratedMisses++
		}
		switch {
		case charge < 0 && st.ChargedMisses > 0:
			st.ChargedMisses--
		case charge > 0:
			return s.charge(ctx, sdkCtx, agent, st)
		}
		return nil
	})
}

// charge charges st one miss and stops its agent once over the allowance.
func (s Store) charge(ctx context.Context, sdkCtx sdk.Context, agent string, st *types.AgentStanding) error {
	params, err := s.reads.Params(ctx)
	if err != nil {
		return fmt.Errorf("load params: %w", err)
	}
	st.ChargedMisses++
	allowance := params.MissAllowance(st.Finished)
	if st.ChargedMisses <= allowance || st.StoppedHeight != 0 {
		return nil
	}
	st.StoppedHeight = sdkCtx.BlockHeight()
	sdkCtx.Logger().Debug("transfer agent stopped", "module", types.ModuleName, "agent", agent,
		"misses", st.ChargedMisses, "allowance", allowance)
	return types.EmitEvent(sdkCtx, &types.EventTransferAgentStopped{
		Agent: agent, EpochIndex: st.EpochIndex, ChargedMisses: st.ChargedMisses,
		MissAllowance: allowance, Finished: st.Finished, Height: st.StoppedHeight,
	})
}

// update applies change to agent's standing this epoch and stores it. An
// agent that left (its inferences outlive it) has no standing to change, so
// that is not an error.
func (s Store) update(ctx context.Context, agent string, change func(*types.AgentStanding, sdk.Context) error) error {
	addr, err := s.ac.StringToBytes(agent)
	if err != nil {
		return fmt.Errorf("transfer agent address %q: %w", agent, err)
	}
	ta, err := s.agents.Get(ctx, addr)
	if errors.Is(err, collections.ErrNotFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("load transfer agent: %w", err)
	}
	index, err := s.epochIndexOrZero(ctx)
	if err != nil {
		return err
	}
	now := standingIn(ta.Standing, index)
	if err := change(&now, sdk.UnwrapSDKContext(ctx)); err != nil {
		return err
	}
	ta.Standing = now
	if err := s.agents.Set(ctx, addr, ta); err != nil {
		return fmt.Errorf("store transfer agent: %w", err)
	}
	return nil
}
