package keeper

import (
	"context"
	"errors"
	"fmt"

	"cosmossdk.io/collections"

	sdk "github.com/cosmos/cosmos-sdk/types"

	"github.com/inferenced/inferenced/x/inference/breaker"
	"github.com/inferenced/inferenced/x/inference/health"
	"github.com/inferenced/inferenced/x/inference/types"
)

// AttestedSample is the validators' majority verdict on one executor in a
// block, as the breaker takes it (the app's pre-blocker delivers them).
type AttestedSample = health.AttestedSample

// ApplyHealth is the breaker's one step per block (health.Store.Step): the
// cooldown promotions due at this height, the traffic outcomes queued by
// the previous block, then the attested samples of this block's bundle.
func (k Keeper) ApplyHealth(ctx context.Context, attested []AttestedSample) error {
	return k.health.Step(ctx, attested)
}

// DefaultHealthStage is the circuit breaker's health stage, which NewKeeper
// installs; SetHealthStage can put it back after a replacement.
func DefaultHealthStage(k Keeper) HealthStage { return k.health.Stage() }

// breakerView is what the breaker's store reads of the rest of the module
// (health.Module). It holds the keeper's collections, never the store's.
type breakerView struct{ k Keeper }

var _ health.Module = breakerView{}

func (v breakerView) Member(ctx context.Context, addr sdk.AccAddress) (types.EpochMember, bool, error) {
	return v.k.memberOf(ctx, addr)
}

func (v breakerView) ModelWeight(ctx context.Context, model string) (uint64, error) {
	w, err := v.k.ModelWeights.Get(ctx, model)
	if errors.Is(err, collections.ErrNotFound) {
		return 0, nil
	}
	return w, err
}

func (v breakerView) PriorSuccesses(ctx context.Context, addr sdk.AccAddress) (uint32, error) {
	p, err := v.k.Participants.Get(ctx, addr)
	if errors.Is(err, collections.ErrNotFound) {
		return 0, nil // it left: its in-flight outcomes start from nothing
	}
	if err != nil {
		return 0, fmt.Errorf("load executor %s: %w", addr, err)
	}
	return uint32(min(p.CurrentEpochStats.InferenceCount, breaker.MaxWindow)), nil
}

func (v breakerView) LoadParams(ctx context.Context) (types.Params, error) {
	return v.k.Params.Get(ctx)
}

// MissCounted: a traffic miss counts against executor, so the SPRT counts
// it (gonka's MissedRequests), and the agent's standing records it. Only an
// attestation clears the agent: a miss backed by other agents' misses stays
// charged, so k colluding agents pay for every miss they make count.
func (v breakerView) MissCounted(ctx context.Context, executor sdk.AccAddress, agent string, wasHeld, byAttestation bool) error {
	if err := v.k.countOutcome(ctx, executor, false); err != nil {
		return err
	}
	if agent == "" { // queued before agents were recorded (an upgraded chain): no one to charge
		return nil
	}
	switch {
	case byAttestation && wasHeld:
		return v.k.refundMiss(ctx, agent) // also counts it corroborated
	case !byAttestation && !wasHeld:
		if err := v.k.chargeMiss(ctx, agent); err != nil {
			return err
		}
	}
	return v.k.countCorroborated(ctx, agent)
}

// MissHeld: nothing corroborates a traffic miss (yet), so it is charged to
// its agent.
func (v breakerView) MissHeld(ctx context.Context, agent string) error {
	if agent == "" {
		return nil
	}
	return v.k.chargeMiss(ctx, agent)
}

// MissExcused: an attestation covers the miss but already counted one of
// the agent's, so the miss does not count, and the agent is not charged.
func (v breakerView) MissExcused(ctx context.Context, agent string, wasHeld bool) error {
	if agent == "" || !wasHeld {
		return nil
	}
	return v.k.refundMiss(ctx, agent)
}

// memberOf returns the epoch member at addr, if it is one.
func (k Keeper) memberOf(ctx context.Context, addr sdk.AccAddress) (types.EpochMember, bool, error) {
	index, err := k.EpochMemberIndex.Get(ctx, addr)
	if errors.Is(err, collections.ErrNotFound) {
		return types.EpochMember{}, false, nil
	}
	if err != nil {
		return types.EpochMember{}, false, fmt.Errorf("look up epoch member: %w", err)
	}
	m, err := k.EpochMembers.Get(ctx, index)
	if err != nil {
		return types.EpochMember{}, false, fmt.Errorf("epoch member %d: %w", index, err)
	}
	return m, true, nil
}
