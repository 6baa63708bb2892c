package keeper

import (
	"context"
	"errors"
	"fmt"

	"cosmossdk.io/collections"

	"github.com/cosmos/cosmos-sdk/telemetry"
	sdk "github.com/cosmos/cosmos-sdk/types"

	"github.com/inferenced/inferenced/x/inference/breaker"
	"github.com/inferenced/inferenced/x/inference/types"
)

// capTracker enforces health_cb_max_excluded_weight_pct within one block's
// breaker step. It loads the per-model weights on the first exclusion the
// block attempts (most blocks attempt none) and follows the step's
// transitions after that. Maps are only looked up, never iterated.
type capTracker struct {
	k        Keeper
	pct      uint64
	loaded   bool
	total    map[string]uint64 // model -> epoch weight of the members serving it
	excluded map[string]uint64 // model -> weight of EXCLUDED and PROBE members
	members  map[string]types.EpochMember
}

func newCapTracker(k Keeper, params types.Params) *capTracker {
	return &capTracker{k: k, pct: params.HealthCbMaxExcludedWeightPct}
}

func isOut(s breaker.State) bool { return s != breaker.Healthy }

func (c *capTracker) load(ctx context.Context) error {
	c.total, c.excluded, c.members = map[string]uint64{}, map[string]uint64{}, map[string]types.EpochMember{}
	if err := c.k.EpochMembers.Walk(ctx, nil, func(_ uint32, m types.EpochMember) (bool, error) {
		c.members[m.Address] = m
		for _, model := range m.Models {
			c.total[model] = saturatingAdd(c.total[model], m.Weight)
		}
		return false, nil
	}); err != nil {
		return fmt.Errorf("walk epoch group: %w", err)
	}
	if err := c.k.ExecutorHealth.Walk(ctx, nil, func(_ sdk.AccAddress, h types.ExecutorHealth) (bool, error) {
		if isOut(breaker.State(h.State)) {
			c.add(h.Address, true)
		}
		return false, nil
	}); err != nil {
		return fmt.Errorf("walk breaker records: %w", err)
	}
	c.loaded = true
	return nil
}

// add moves a member's weight into (or out of) the excluded tallies.
func (c *capTracker) add(address string, in bool) {
	m, ok := c.members[address]
	if !ok {
		return
	}
	for _, model := range m.Models {
		if in {
			c.excluded[model] = saturatingAdd(c.excluded[model], m.Weight)
		} else {
			c.excluded[model] -= min(c.excluded[model], m.Weight)
		}
	}
}

// moved follows a transition made in this step.
func (c *capTracker) moved(addr sdk.AccAddress, from, to breaker.State) {
	if !c.loaded || isOut(from) == isOut(to) {
		return
	}
	if address, err := c.k.addressCodec.BytesToString(addr); err == nil {
		c.add(address, isOut(to))
	}
}

// admit says whether excluding addr keeps every model it serves within the
// cap, and emits EventExclusionCapped for the first model it would not.
// A non-member is never drawn, so excluding it costs no capacity.
func (c *capTracker) admit(ctx context.Context, addr sdk.AccAddress, height int64) (bool, error) {
	if !c.loaded {
		if err := c.load(ctx); err != nil {
			return false, err
		}
	}
	address, err := c.k.addressCodec.BytesToString(addr)
	if err != nil {
		return false, fmt.Errorf("encode executor: %w", err)
	}
	m, ok := c.members[address]
	if !ok {
		return true, nil
	}
	for _, model := range m.Models {
		if breaker.WithinCap(c.excluded[model], m.Weight, c.total[model], uint32(c.pct)) {
			continue
		}
		err := sdk.UnwrapSDKContext(ctx).EventManager().EmitTypedEvent(&types.EventExclusionCapped{
			Executor: address, Model: model, ExcludedWeight: c.excluded[model], ExecutorWeight: m.Weight,
			ModelWeight: c.total[model], CapPct: c.pct, Height: height,
		})
		if err != nil {
			return false, fmt.Errorf("emit cap event: %w", err)
		}
		telemetry.IncrCounter(1, types.ModuleName, "breaker", "cap_refusals")
		return false, nil
	}
	return true, nil
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
