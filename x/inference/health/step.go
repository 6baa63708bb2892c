package health

import (
	"context"
	"fmt"

	"cosmossdk.io/collections"

	sdk "github.com/cosmos/cosmos-sdk/types"

	"github.com/inferenced/inferenced/x/inference/breaker"
	"github.com/inferenced/inferenced/x/inference/evidence"
	"github.com/inferenced/inferenced/x/inference/types"
)

// AttestedSample is the validators' majority verdict on one executor in a
// block (vote extensions deliver them).
type AttestedSample struct {
	Executor sdk.AccAddress
	Miss     bool
}

// step is one block's breaker step: params, the exclusion cap and whether
// anything changed state.
type step struct {
	s       Store
	ctx     context.Context
	height  int64
	bp      breaker.Params
	ep      evidence.Params
	cap     *capTracker
	changed bool
}

// Step is the breaker's one step per block, run before anything else in the
// block: it promotes the EXCLUDED executors whose cooldown has passed, then
// applies the traffic outcomes queued by the previous block, then the
// attested samples, in that order. Selection and enforcement in this block
// and later see the result.
func (s Store) Step(ctx context.Context, attested []AttestedSample) error {
	params, err := s.module.LoadParams(ctx)
	if err != nil {
		return fmt.Errorf("load params: %w", err)
	}
	st := &step{
		s: s, ctx: ctx, height: sdk.UnwrapSDKContext(ctx).BlockHeight(),
		bp: params.BreakerParams(), ep: params.EvidenceParams(), cap: newCapTracker(s, params.HealthCbMaxExcludedWeightPct),
	}
	if err := st.promoteDue(); err != nil {
		return err
	}
	if err := st.applyTraffic(); err != nil {
		return err
	}
	for _, a := range attested {
		if err := st.applyAttested(a); err != nil {
			return err
		}
	}
	if st.changed {
		return s.reportGauges(ctx)
	}
	return nil
}

// promoteDue promotes the EXCLUDED executors whose cooldown has passed. A
// block in which the breaker holds no one has nothing to promote and opens
// no iterator.
func (st *step) promoteDue() error {
	if count, err := st.s.heldCount(st.ctx); err != nil || count == 0 {
		return err
	}
	var due []collections.Pair[int64, sdk.AccAddress]
	rng := collections.NewPrefixUntilPairRange[int64, sdk.AccAddress](st.height)
	if err := st.s.cooldowns.Walk(st.ctx, rng, func(key collections.Pair[int64, sdk.AccAddress]) (bool, error) {
		due = append(due, key)
		return false, nil
	}); err != nil {
		return fmt.Errorf("walk cooldown index: %w", err)
	}
	for _, key := range due {
		before, err := st.s.load(st.ctx, key.K2())
		if err != nil {
			return err
		}
		after := before
		var t breaker.Transition
		after.rec, t = breaker.Promote(before.rec, st.height)
		if !t.Changed() {
			// Not an EXCLUDED record due now: a stale entry, dropped so it
			// is not read again every block.
			if err := st.s.cooldowns.Remove(st.ctx, key); err != nil {
				return fmt.Errorf("drop stale cooldown entry: %w", err)
			}
			continue
		}
		if err := st.s.save(st.ctx, before, after); err != nil {
			return err
		}
		if err := st.report(after, t); err != nil {
			return err
		}
	}
	return nil
}

type queuedSample struct {
	key    collections.Pair[sdk.AccAddress, uint64]
	sample types.PendingSample
}

// applyTraffic applies and removes every queued traffic outcome, executor by
// executor in address order, each in the order it was observed. An
// executor's record is loaded once and stored once, after all its samples,
// so a record is never dropped and re-created halfway through a block.
// A block with nothing queued opens no iterator.
func (st *step) applyTraffic() error {
	all, err := st.s.dequeueAll(st.ctx)
	if err != nil {
		return err
	}
	for start := 0; start < len(all); {
		addr := all[start].key.K1()
		end := start + 1
		for end < len(all) && addr.Equals(all[end].key.K1()) {
			end++
		}
		if err := st.applyBatch(all[start:end]); err != nil {
			return err
		}
		start = end
	}
	return nil
}

// dequeueAll takes every queued sample out of the store, in key order.
func (s Store) dequeueAll(ctx context.Context) ([]queuedSample, error) {
	marked, err := s.queued.Has(ctx)
	if err != nil {
		return nil, fmt.Errorf("look up queued-samples mark: %w", err)
	}
	if !marked {
		return nil, nil
	}
	if err := s.queued.Remove(ctx); err != nil {
		return nil, fmt.Errorf("drop queued-samples mark: %w", err)
	}
	var all []queuedSample
	if err := s.pending.Walk(ctx, nil, func(key collections.Pair[sdk.AccAddress, uint64], v types.PendingSample) (bool, error) {
		all = append(all, queuedSample{key, v})
		return false, nil
	}); err != nil {
		return nil, fmt.Errorf("walk pending samples: %w", err)
	}
	for _, q := range all {
		if err := s.pending.Remove(ctx, q.key); err != nil {
			return nil, fmt.Errorf("dequeue sample: %w", err)
		}
	}
	return all, nil
}

// applyBatch applies one executor's queued samples to its record.
func (st *step) applyBatch(batch []queuedSample) error {
	before, err := st.s.load(st.ctx, batch[0].key.K1())
	if err != nil {
		return err
	}
	after := before
	if !before.stored {
		after.rec.Windows[breaker.Traffic] = breaker.Prefilled(batch[0].sample.PriorOks)
	}
	for _, q := range batch {
		probe := after.rec.ProbeInFlight && after.probeID == q.sample.InferenceId
		if after, err = st.applyOutcome(after, q.sample, probe); err != nil {
			return err
		}
	}
	return st.s.save(st.ctx, before, after)
}

// applyOutcome passes one traffic outcome through the evidence ledger. A
// success reaches the breaker at once; a miss only when it is
// corroborated, together with the held misses it corroborates. A miss
// nothing backs is held and charged to its agent; if it was the probe, the
// slot is released for another agent's probe instead of re-excluding.
func (st *step) applyOutcome(e entry, sample types.PendingSample, probe bool) (entry, error) {
	if !sample.Miss {
		e.ledger = e.ledger.OK(st.ep)
		return st.observe(e, breaker.Sample{Kind: breaker.Traffic, StartedAt: sample.StartHeight, Probe: probe})
	}
	var verdicts []evidence.Verdict
	e.ledger, verdicts = e.ledger.Miss(evidence.Miss{
		Agent: sample.Agent, Start: sample.StartHeight, End: sample.EndHeight, Probe: probe,
	}, st.ep, e.rec.Since)
	decided, observed := false, false // a verdict on the new miss; one the breaker sees
	for _, v := range verdicts {
		if !v.WasHeld {
			decided, observed = true, !v.Excused
		}
		var err error
		if e, err = st.count(e, v); err != nil {
			return e, err
		}
	}
	if probe && !observed {
		// The probe ended without a result the breaker sees: free the slot.
		e.rec = breaker.ReleaseProbe(e.rec)
	}
	if decided {
		return e, nil
	}
	if err := st.s.module.MissHeld(st.ctx, sample.Agent); err != nil {
		return e, err
	}
	return e, st.s.emitHeld(st.ctx, e, sample, probe, st.height)
}

// count applies a miss that counts against the executor: the SPRT and the
// agent's standing hear of it, and the breaker observes it (under its own
// rules: a stale miss, or one while EXCLUDED, changes no state). An
// excused miss only clears its agent.
func (st *step) count(e entry, v evidence.Verdict) (entry, error) {
	if v.Excused {
		return e, st.s.module.MissExcused(st.ctx, v.Miss.Agent, v.WasHeld)
	}
	if err := st.s.module.MissCounted(st.ctx, e.addr, v.Miss.Agent, v.WasHeld, v.ByAttestation); err != nil {
		return e, err
	}
	if err := st.s.emitCounted(st.ctx, e, v, st.height); err != nil {
		return e, err
	}
	return st.observe(e, breaker.Sample{Kind: breaker.Traffic, Miss: true, StartedAt: v.Miss.Start, Probe: v.Miss.Probe})
}

// applyAttested applies one attested verdict. An ok for an executor the
// breaker holds nothing on changes nothing and costs one read. An attested
// miss first makes the held traffic misses in flight at the time count.
func (st *step) applyAttested(a AttestedSample) error {
	before, err := st.s.load(st.ctx, a.Executor)
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
		oks, err := st.s.priorSuccesses(st.ctx, a.Executor)
		if err != nil {
			return err
		}
		after.rec.Windows[breaker.Traffic] = breaker.Prefilled(oks)
		after.rec.Windows[breaker.Attested] = breaker.Prefilled(breaker.MaxWindow)
	}
	if a.Miss {
		var verdicts []evidence.Verdict
		after.ledger, verdicts = after.ledger.AttestedMiss(st.height)
		for _, v := range verdicts {
			if after, err = st.count(after, v); err != nil {
				return err
			}
		}
	}
	if after, err = st.observe(after, breaker.Sample{Kind: breaker.Attested, Miss: a.Miss}); err != nil {
		return err
	}
	return st.s.save(st.ctx, before, after)
}

// observe applies one sample to an entry in memory and reports a state
// change; the caller stores the entry.
func (st *step) observe(e entry, sample breaker.Sample) (entry, error) {
	var capErr error
	mayExclude := func() bool {
		ok, err := st.cap.admit(st.ctx, e.addr, st.height)
		capErr = err
		return ok && err == nil
	}
	var t breaker.Transition
	e.rec, t = breaker.Observe(e.rec, sample, st.bp, st.height, mayExclude)
	if capErr != nil {
		return e, capErr
	}
	if !e.rec.ProbeInFlight {
		e.probeID = ""
	}
	return e, st.report(e, t)
}

// report emits a state change and lets the cap follow it.
func (st *step) report(e entry, t breaker.Transition) error {
	if !t.Changed() {
		return nil
	}
	if err := st.cap.moved(st.ctx, e.addr, t.From, t.To); err != nil {
		return err
	}
	st.changed = true
	return st.s.emitTransition(st.ctx, e, t, st.height)
}
