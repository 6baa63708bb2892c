package keeper

import (
	"context"
	"fmt"

	"cosmossdk.io/collections"

	sdk "github.com/cosmos/cosmos-sdk/types"

	"github.com/inferenced/inferenced/x/inference/breaker"
	"github.com/inferenced/inferenced/x/inference/types"
)

// AttestedSample is the validators' majority verdict on one executor in a
// block (vote extensions deliver them).
type AttestedSample struct {
	Executor sdk.AccAddress
	Miss     bool
}

// healthStep is one block's breaker step: params, the exclusion cap and
// the events it emits.
type healthStep struct {
	k      Keeper
	ctx    context.Context
	height int64
	params types.Params
	bp     breaker.Params
	cap    *capTracker
	// changed is set when any executor changed state in this step.
	changed bool
}

// ApplyHealth is the breaker's one step per block, run before anything
// else in the block: it promotes the EXCLUDED executors whose cooldown has
// passed, then applies the traffic outcomes queued by the previous block,
// then the attested samples, in that order. Selection and enforcement in
// this block and later see the result.
func (k Keeper) ApplyHealth(ctx context.Context, attested []AttestedSample) error {
	params, err := k.Params.Get(ctx)
	if err != nil {
		return fmt.Errorf("load params: %w", err)
	}
	s := &healthStep{
		k: k, ctx: ctx, height: sdk.UnwrapSDKContext(ctx).BlockHeight(),
		params: params, bp: params.BreakerParams(),
	}
	s.cap = newCapTracker(k, params)
	if err := s.promoteDue(); err != nil {
		return err
	}
	if err := s.applyTraffic(); err != nil {
		return err
	}
	for _, a := range attested {
		if err := s.observe(a.Executor, nil, breaker.Sample{Kind: breaker.Attested, Miss: a.Miss}, 0); err != nil {
			return err
		}
	}
	if s.changed {
		return k.reportHealthGauges(ctx)
	}
	return nil
}

func (s *healthStep) promoteDue() error {
	var due []collections.Pair[int64, sdk.AccAddress]
	rng := collections.NewPrefixUntilPairRange[int64, sdk.AccAddress](s.height)
	if err := s.k.CooldownIndex.Walk(s.ctx, rng, func(key collections.Pair[int64, sdk.AccAddress]) (bool, error) {
		due = append(due, key)
		return false, nil
	}); err != nil {
		return fmt.Errorf("walk cooldown index: %w", err)
	}
	for _, key := range due {
		before, err := s.k.loadHealth(s.ctx, key.K2())
		if err != nil {
			return err
		}
		if !before.stored {
			// An index entry without a record: drop it, nothing to promote.
			if err := s.k.CooldownIndex.Remove(s.ctx, key); err != nil {
				return fmt.Errorf("drop stale cooldown entry: %w", err)
			}
			continue
		}
		after := before
		var t breaker.Transition
		after.rec, t = breaker.Promote(before.rec, s.height)
		if err := s.commit(before, after, t); err != nil {
			return err
		}
	}
	return nil
}

// applyTraffic applies and removes every queued traffic outcome, executor by
// executor in address order, each in the order it was observed.
func (s *healthStep) applyTraffic() error {
	type queued struct {
		key    collections.Pair[sdk.AccAddress, uint64]
		sample types.PendingSample
	}
	var all []queued
	if err := s.k.PendingSamples.Walk(s.ctx, nil, func(key collections.Pair[sdk.AccAddress, uint64], v types.PendingSample) (bool, error) {
		all = append(all, queued{key, v})
		return false, nil
	}); err != nil {
		return fmt.Errorf("walk pending samples: %w", err)
	}
	for _, q := range all {
		if err := s.k.PendingSamples.Remove(s.ctx, q.key); err != nil {
			return fmt.Errorf("dequeue sample: %w", err)
		}
		sample := breaker.Sample{Kind: breaker.Traffic, Miss: q.sample.Miss}
		if err := s.observe(q.key.K1(), &q.sample.InferenceId, sample, q.sample.PriorOks); err != nil {
			return err
		}
	}
	return nil
}

// observe applies one sample to an executor. inferenceID, for a traffic
// sample, says which inference it is the outcome of: only the probe's own
// outcome is a probe result.
func (s *healthStep) observe(addr sdk.AccAddress, inferenceID *string, sample breaker.Sample, priorOKs uint32) error {
	before, err := s.k.loadHealth(s.ctx, addr)
	if err != nil {
		return err
	}
	if !before.stored {
		before.rec.Windows[breaker.Traffic] = breaker.Prefilled(priorOKs)
	}
	sample.Probe = inferenceID != nil && before.rec.ProbeInFlight && before.probeID == *inferenceID
	var capErr error
	mayExclude := func() bool {
		ok, err := s.cap.admit(s.ctx, addr, s.height)
		capErr = err
		return ok && err == nil
	}
	after := before
	var t breaker.Transition
	after.rec, t = breaker.Observe(before.rec, sample, s.bp, s.height, mayExclude)
	if capErr != nil {
		return capErr
	}
	return s.commit(before, after, t)
}

// commit stores a step's result and reports a state change.
func (s *healthStep) commit(before, after healthEntry, t breaker.Transition) error {
	if err := s.k.saveHealth(s.ctx, before, after); err != nil {
		return err
	}
	if !t.Changed() {
		return nil
	}
	s.cap.moved(after.addr, t.From, t.To)
	s.changed = true
	return s.k.emitTransition(s.ctx, after, t, s.height)
}
