package breakerstore

import (
	"context"
	"fmt"

	sdk "github.com/cosmos/cosmos-sdk/types"

	"github.com/inferenced/inferenced/x/inference/breaker"
	"github.com/inferenced/inferenced/x/inference/types"
)

// capTracker enforces health_cb_max_excluded_weight_pct within one block's
// step. On the first exclusion the block attempts (most attempt none) it
// reads the weight of the executors already out, through the gates (one
// per EXCLUDED or PROBE executor), and follows the step's transitions after
// that; model totals come from the keeper (Reads). Maps are only looked up, never
// iterated.
type capTracker struct {
	s        Store
	pct      uint64
	loaded   bool
	total    map[string]uint64 // model -> epoch weight, read on demand
	excluded map[string]uint64 // model -> weight of EXCLUDED and PROBE members
	// refused are the refusals admit decided and the step has not emitted
	// yet: emitted in the order of the step's effects (emitRefusal).
	refused []*types.EventExclusionCapped
}

func newCapTracker(s Store, pct uint64) *capTracker { return &capTracker{s: s, pct: pct} }

func isOut(s breaker.State) bool { return s != breaker.Healthy }

func (c *capTracker) load(ctx context.Context) error {
	c.total, c.excluded = map[string]uint64{}, map[string]uint64{}
	var out []string
	if err := c.s.gates.Walk(ctx, nil, func(address string, _ uint64) (bool, error) {
		out = append(out, address)
		return false, nil
	}); err != nil {
		return fmt.Errorf("walk health gates: %w", err)
	}
	for _, address := range out {
		addr, err := c.s.ac.StringToBytes(address)
		if err != nil {
			return fmt.Errorf("gate address %q: %w", address, err)
		}
		if err := c.add(ctx, addr, true); err != nil {
			return err
		}
	}
	c.loaded = true
	return nil
}

// add moves a member's weight into (or out of) the excluded tallies.
func (c *capTracker) add(ctx context.Context, addr sdk.AccAddress, in bool) error {
	m, ok, err := c.s.member(ctx, addr)
	if err != nil || !ok {
		return err
	}
	for _, model := range m.Models {
		if in {
			c.excluded[model] = types.AddWeight(c.excluded[model], m.Weight)
		} else {
			c.excluded[model] -= min(c.excluded[model], m.Weight)
		}
	}
	return nil
}

// moved follows a transition made in this step.
func (c *capTracker) moved(ctx context.Context, addr sdk.AccAddress, from, to breaker.State) error {
	if !c.loaded || isOut(from) == isOut(to) {
		return nil
	}
	return c.add(ctx, addr, isOut(to))
}

func (c *capTracker) modelWeight(ctx context.Context, model string) (uint64, error) {
	if w, ok := c.total[model]; ok {
		return w, nil
	}
	w, err := c.s.reads.ModelWeight(ctx, model)
	if err != nil {
		return 0, fmt.Errorf("load model weight: %w", err)
	}
	c.total[model] = w
	return w, nil
}

// admit says whether excluding addr keeps every model it serves within the
// cap; for the first model it would not, EventExclusionCapped waits for
// emitRefusal, so that it follows the misses that caused the trip.
// A non-member is never drawn, so excluding it costs no capacity.
func (c *capTracker) admit(ctx context.Context, addr sdk.AccAddress, height int64) (bool, error) {
	if !c.loaded {
		if err := c.load(ctx); err != nil {
			return false, err
		}
	}
	m, ok, err := c.s.member(ctx, addr)
	if err != nil || !ok {
		return err == nil, err
	}
	for _, model := range m.Models {
		total, err := c.modelWeight(ctx, model)
		if err != nil {
			return false, err
		}
		if breaker.WithinCap(c.excluded[model], m.Weight, total, uint32(c.pct)) {
			continue
		}
		c.refused = append(c.refused, &types.EventExclusionCapped{
			Executor: m.Address, Model: model, ExcludedWeight: c.excluded[model], ExecutorWeight: m.Weight,
			ModelWeight: total, CapPct: c.pct, Height: height,
		})
		return false, nil
	}
	return true, nil
}

// emitRefusal emits the oldest refusal admit decided (judge's CapRefused
// effect, in order).
func (c *capTracker) emitRefusal(ctx context.Context) error {
	if len(c.refused) == 0 {
		return nil
	}
	ev := c.refused[0]
	c.refused = c.refused[1:]
	if err := sdk.UnwrapSDKContext(ctx).EventManager().EmitTypedEvent(ev); err != nil {
		return fmt.Errorf("emit cap event: %w", err)
	}
	seriesCapRefusals.Inc()
	return nil
}
