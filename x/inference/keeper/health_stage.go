package keeper

import (
	"context"
	"fmt"

	errorsmod "cosmossdk.io/errors"

	sdk "github.com/cosmos/cosmos-sdk/types"

	"github.com/inferenced/inferenced/x/inference/breaker"
	"github.com/inferenced/inferenced/x/inference/types"
)

// breakerStage is the circuit breaker as the health stage of selection:
// EXCLUDED executors are out, a PROBE executor whose slot is free is offered
// at a probe weight, everyone else passes unchanged. In shadow mode
// (health_cb_enforce false) it lets everything through.
type breakerStage struct{ k Keeper }

var _ HealthStage = breakerStage{}

// Filter reads the breaker records once (there is one per executor that is
// not plainly healthy, usually few) and looks each candidate up by address.
func (s breakerStage) Filter(ctx context.Context, height int64, pool []Candidate) ([]Candidate, error) {
	params, err := s.k.Params.Get(ctx)
	if err != nil {
		return nil, fmt.Errorf("load params: %w", err)
	}
	if !params.HealthCbEnforce {
		return pool, nil
	}
	records := map[string]types.ExecutorHealth{}
	if err := s.k.ExecutorHealth.Walk(ctx, nil, func(_ sdk.AccAddress, h types.ExecutorHealth) (bool, error) {
		if h.State != types.HEALTH_STATE_HEALTHY {
			records[h.Address] = h
		}
		return false, nil
	}); err != nil {
		return nil, fmt.Errorf("walk breaker records: %w", err)
	}
	if len(records) == 0 {
		return pool, nil
	}
	out := pool[:0]
	var probes []int
	var healthyWeight, healthy uint64
	for _, c := range pool {
		h, ok := records[c.Member.Address]
		switch {
		case !ok:
			healthyWeight = saturatingAdd(healthyWeight, c.Weight)
			healthy++
		case probeOffered(h, height):
			probes = append(probes, len(out))
			c.Probe = true
		default:
			continue
		}
		out = append(out, c)
	}
	w := probeWeight(healthyWeight, healthy)
	for _, i := range probes {
		out[i].Weight = min(out[i].Weight, w)
	}
	return out, nil
}

// probeOffered: a PROBE executor with its slot free, or an EXCLUDED one
// whose cooldown has passed by height (the block's first step will promote
// it before any start runs).
func probeOffered(h types.ExecutorHealth, height int64) bool {
	switch h.State {
	case types.HEALTH_STATE_PROBE:
		return h.ProbeInferenceId == ""
	case types.HEALTH_STATE_EXCLUDED:
		return height >= h.ExcludedAt+int64(h.CooldownBlocks)
	}
	return false
}

// probeWeight is the weight a probe is offered at: the average weight of the
// healthy candidates (at least 1). The probe slot already bounds what a
// still-dead executor costs to one request, so the weight only decides how
// soon a recovered one is tried; at weight 1 among a large total weight it
// could wait for thousands of requests. The probe never gets more than its
// own epoch weight.
func probeWeight(healthyWeight, healthy uint64) uint64 {
	if healthy == 0 {
		return 1
	}
	return max(1, healthyWeight/healthy)
}

// CheckStart refuses a start on an executor excluded before the previous
// block (a query answered from the previous block could not have seen a
// newer exclusion) and on a probe whose slot is taken.
func (s breakerStage) CheckStart(ctx context.Context, executor sdk.AccAddress, _ string) error {
	params, err := s.k.Params.Get(ctx)
	if err != nil {
		return fmt.Errorf("load params: %w", err)
	}
	if !params.HealthCbEnforce {
		return nil
	}
	e, err := s.k.loadHealth(ctx, executor)
	if err != nil {
		return err
	}
	height := sdk.UnwrapSDKContext(ctx).BlockHeight()
	switch e.rec.State {
	case breaker.Excluded:
		if e.rec.ExcludedAt >= height-1 {
			return nil
		}
		return errorsmod.Wrapf(types.ErrExecutorNotRoutable, "executor %s is excluded by the circuit breaker until block %d", executor, e.rec.EligibleAt())
	case breaker.Probe:
		if e.rec.ProbeInFlight {
			return errorsmod.Wrapf(types.ErrExecutorNotRoutable, "executor %s is on probation and its probe slot is taken by inference %q", executor, e.probeID)
		}
	}
	return nil
}
