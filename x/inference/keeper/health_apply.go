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
		bp: params.BreakerParams(), cap: newCapTracker(k, params),
	}
	if err := s.promoteDue(); err != nil {
		return err
	}
	if err := s.applyTraffic(); err != nil {
		return err
	}
	for _, a := range attested {
		if err := s.applyAttested(a); err != nil {
			return err
		}
	}
	if s.changed {
		return k.reportHealthGauges(ctx)
	}
	return nil
}

// promoteDue promotes the EXCLUDED executors whose cooldown has passed. A
// block in which the breaker holds no one has nothing to promote and opens
// no iterator.
func (s *healthStep) promoteDue() error {
	if count, err := s.k.healthRecords(s.ctx); err != nil || count == 0 {
		return err
	}
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
		after := before
		var t breaker.Transition
		after.rec, t = breaker.Promote(before.rec, s.height)
		if !t.Changed() {
			// Not an EXCLUDED record due now: a stale entry, dropped so it
			// is not read again every block.
			if err := s.k.CooldownIndex.Remove(s.ctx, key); err != nil {
				return fmt.Errorf("drop stale cooldown entry: %w", err)
			}
			continue
		}
		if err := s.k.saveHealth(s.ctx, before, after); err != nil {
			return err
		}
		if err := s.report(after, t); err != nil {
			return err
		}
	}
	return nil
}

// applyTraffic applies and removes every queued traffic outcome, executor by
// executor in address order, each in the order it was observed. An
// executor's record is loaded once and stored once, after all its samples.
// A block with nothing queued opens no iterator.
func (s *healthStep) applyTraffic() error {
	marked, err := s.k.SamplesQueued.Has(s.ctx)
	if err != nil {
		return fmt.Errorf("look up queued-samples mark: %w", err)
	}
	if !marked {
		return nil
	}
	if err := s.k.SamplesQueued.Remove(s.ctx); err != nil {
		return fmt.Errorf("drop queued-samples mark: %w", err)
	}
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
	for start := 0; start < len(all); {
		addr := all[start].key.K1()
		end := start + 1
		for end < len(all) && addr.Equals(all[end].key.K1()) {
			end++
		}
		before, err := s.k.loadHealth(s.ctx, addr)
		if err != nil {
			return err
		}
		after := before
		if !before.stored {
			after.rec.Windows[breaker.Traffic] = breaker.Prefilled(all[start].sample.PriorOks)
		}
		for _, q := range all[start:end] {
			if err := s.k.PendingSamples.Remove(s.ctx, q.key); err != nil {
				return fmt.Errorf("dequeue sample: %w", err)
			}
			sample := breaker.Sample{
				Kind: breaker.Traffic, Miss: q.sample.Miss, StartedAt: q.sample.StartHeight,
				Probe: after.rec.ProbeInFlight && after.probeID == q.sample.InferenceId,
			}
			if after, err = s.observe(after, sample); err != nil {
				return err
			}
		}
		if err := s.k.saveHealth(s.ctx, before, after); err != nil {
			return err
		}
		start = end
	}
	return nil
}

// applyAttested applies one attested verdict. An ok for an executor the
// breaker holds nothing on changes nothing and costs one read.
func (s *healthStep) applyAttested(a AttestedSample) error {
	before, err := s.k.loadHealth(s.ctx, a.Executor)
	if err != nil {
		return err
	}
	if !before.stored && !a.Miss {
		return nil
	}
	after := before
	if !before.stored {
		// No record: no recent miss of either kind. Attested samples come
		// every block, so the attested history is taken as a full window.
		oks, err := s.k.countedSuccesses(s.ctx, a.Executor)
		if err != nil {
			return err
		}
		after.rec.Windows[breaker.Traffic] = breaker.Prefilled(oks)
		after.rec.Windows[breaker.Attested] = breaker.Prefilled(breaker.MaxWindow)
	}
	if after, err = s.observe(after, breaker.Sample{Kind: breaker.Attested, Miss: a.Miss}); err != nil {
		return err
	}
	return s.k.saveHealth(s.ctx, before, after)
}

// observe applies one sample to an entry in memory and reports a state
// change; the caller stores the entry.
func (s *healthStep) observe(e healthEntry, sample breaker.Sample) (healthEntry, error) {
	var capErr error
	mayExclude := func() bool {
		ok, err := s.cap.admit(s.ctx, e.addr, s.height)
		capErr = err
		return ok && err == nil
	}
	var t breaker.Transition
	e.rec, t = breaker.Observe(e.rec, sample, s.bp, s.height, mayExclude)
	if capErr != nil {
		return e, capErr
	}
	if !e.rec.ProbeInFlight {
		e.probeID = ""
	}
	return e, s.report(e, t)
}

// report emits a state change and lets the cap follow it.
func (s *healthStep) report(e healthEntry, t breaker.Transition) error {
	if !t.Changed() {
		return nil
	}
	if err := s.cap.moved(s.ctx, e.addr, t.From, t.To); err != nil {
		return err
	}
	s.changed = true
	return s.k.emitTransition(s.ctx, e, t, s.height)
}
