package breakerstore

import (
	"context"
	"fmt"

	errorsmod "cosmossdk.io/errors"

	sdk "github.com/cosmos/cosmos-sdk/types"

	"github.com/inferenced/inferenced/x/inference/breaker"
	"github.com/inferenced/inferenced/x/inference/types"
)

// The breaker as the health stage of selection and enforcement: EXCLUDED
// executors are out, a PROBE executor whose slot is free is offered at a
// probe weight, everyone else passes unchanged. In shadow mode
// (health_cb_enforce false) the keeper does not ask.

// OutOfRotation calls visit with the address of every EXCLUDED or PROBE
// executor (those with a gate), in address-string order: what the
// validators' monitors read to canary them harder.
func (s Store) OutOfRotation(ctx context.Context, visit func(address string)) error {
	if err := s.gates.Walk(ctx, nil, func(address string, _ uint64) (bool, error) {
		visit(address)
		return false, nil
	}); err != nil {
		return fmt.Errorf("walk health gates: %w", err)
	}
	return nil
}

// Filter reads the gates once (one small entry per EXCLUDED or PROBE
// executor, usually few) and looks each candidate up by address, as of the
// block at height.
func (s Store) Filter(ctx context.Context, height int64, pool []types.Candidate) ([]types.Candidate, error) {
	gates := map[string]breaker.Gate{}
	if err := s.gates.Walk(ctx, nil, func(address string, g uint64) (bool, error) {
		gates[address] = breaker.Gate(g)
		return false, nil
	}); err != nil {
		return nil, fmt.Errorf("walk health gates: %w", err)
	}
	if len(gates) == 0 {
		return pool, nil
	}
	out := pool[:0]
	var probes []int
	var healthyWeight, healthy uint64
	for _, c := range pool {
		g, gated := gates[c.Member.Address]
		switch {
		case !gated:
			healthyWeight = types.AddWeight(healthyWeight, c.Weight)
			healthy++
		case g.OffersProbe(height):
			probes = append(probes, len(out))
			c.Probe = true
		default:
			continue
		}
		out = append(out, c)
	}
	w := breaker.ProbeWeight(healthyWeight, healthy)
	for _, i := range probes {
		out[i].Weight = min(out[i].Weight, w)
	}
	return out, nil
}

// CheckScope refuses, wrapping ErrExecutorNotRoutable, a start by agent on
// an executor whose scoped traffic trip keeps that agent out (judge.Scope):
// the executor serves everyone else.
func (s Store) CheckScope(ctx context.Context, executor sdk.AccAddress, agent string) error {
	e, err := s.loadStored(ctx, executor)
	if err != nil {
		return err
	}
	if !e.scope.Refuses(agent, sdk.UnwrapSDKContext(ctx).BlockHeight()) {
		return nil
	}
	return errorsmod.Wrapf(types.ErrExecutorNotRoutable,
		"executor %s is out for transfer agent %s until block %d: misses through it tripped the breaker while the validators' canaries saw the executor serving others",
		executor, agent, e.scope.Until)
}

// CheckStart refuses a start on an executor excluded before the previous
// block (a query answered from the previous block could not have seen a
// newer exclusion) and on a probe whose slot is taken, wrapping
// ErrExecutorNotRoutable.
func (s Store) CheckStart(ctx context.Context, executor sdk.AccAddress) error {
	e, err := s.loadStored(ctx, executor)
	if err != nil {
		return err
	}
	if !breaker.RefusesStart(e.rec, sdk.UnwrapSDKContext(ctx).BlockHeight()) {
		return nil
	}
	if e.rec.State == breaker.Excluded {
		return errorsmod.Wrapf(types.ErrExecutorNotRoutable, "executor %s is excluded by the circuit breaker until block %d", executor, e.rec.EligibleAt())
	}
	return errorsmod.Wrapf(types.ErrExecutorNotRoutable, "executor %s is on probation and its probe slot is taken by inference %q of transfer agent %s",
		executor, e.probe.id, e.probe.agent)
}
