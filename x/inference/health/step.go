package health

import (
	"context"
	"fmt"

	"cosmossdk.io/collections"

	sdk "github.com/cosmos/cosmos-sdk/types"

	"github.com/inferenced/inferenced/x/inference/breaker"
	"github.com/inferenced/inferenced/x/inference/evidence"
	"github.com/inferenced/inferenced/x/inference/judge"
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
		after = before.fresh(batch[0].sample.PriorOks)
	}
	for _, q := range batch {
		probe := after.rec.ProbeInFlight && after.probe.is(q.sample.Agent, q.sample.InferenceId)
		if after, err = st.applyOutcome(after, q.sample, probe); err != nil {
			return err
		}
	}
	return st.s.save(st.ctx, before, after)
}

// applyOutcome applies one traffic outcome (x/inference/judge decides
// what it does) and records the effects.
func (st *step) applyOutcome(e entry, sample types.PendingSample, probe bool) (entry, error) {
	x, mayExclude, capErr := st.judged(e)
	x, effects := judge.Traffic(x, judge.Outcome{
		Agent: sample.Agent, Start: sample.StartHeight, End: sample.EndHeight, Miss: sample.Miss, Probe: probe,
	}, st.params(), st.height, mayExclude)
	return st.record(e, x, effects, capErr)
}

// applyAttested applies one attested verdict. An ok for an executor the
// breaker holds nothing on changes nothing and costs one read.
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
		oks, err := st.s.priorSuccesses(st.ctx, a.Executor)
		if err != nil {
			return err
		}
		after = before.fresh(oks)
	}
	x, mayExclude, capErr := st.judged(after)
	x, effects := judge.Attested(x, a.Miss, st.params(), st.height, mayExclude)
	if after, err = st.record(after, x, effects, capErr); err != nil {
		return err
	}
	return st.s.save(st.ctx, before, after)
}

func (st *step) params() judge.Params { return judge.Params{Breaker: st.bp, Evidence: st.ep} }

// judged returns the entry as the judge sees it, and the exclusion cap's
// question for it; the cap's fault, if any, lands in *capErr.
func (st *step) judged(e entry) (judge.Executor, judge.MayExclude, *error) {
	capErr := new(error)
	mayExclude := func() bool {
		ok, err := st.cap.admit(st.ctx, e.addr, st.height)
		if err != nil && *capErr == nil {
			*capErr = err
		}
		return ok && err == nil
	}
	return judge.Executor{Record: e.rec, Ledger: e.ledger}, mayExclude, capErr
}

// record takes the judge's result into the entry and records its effects
// in order: the SPRT and the agents' standing hear of every counted, held
// or excused miss, and every state change is emitted and followed by the
// cap. The caller stores the entry.
func (st *step) record(e entry, x judge.Executor, effects []judge.Effect, capErr *error) (entry, error) {
	if *capErr != nil {
		return e, *capErr
	}
	e.rec, e.ledger = x.Record, x.Ledger
	if !e.rec.ProbeInFlight {
		e.probe = probeRef{}
	}
	for _, ef := range effects {
		var err error
		switch ef.Kind {
		case judge.Counted:
			v := ef.Verdict
			if err = st.s.module.MissCounted(st.ctx, e.addr, v.Miss.Agent, v.WasHeld, v.ByAttestation); err == nil {
				err = st.s.emitCounted(st.ctx, e, v, st.height)
			}
		case judge.Excused:
			err = st.s.module.MissExcused(st.ctx, ef.Verdict.Miss.Agent, ef.Verdict.WasHeld)
		case judge.Held:
			if err = st.s.module.MissHeld(st.ctx, ef.Outcome.Agent); err == nil {
				err = st.s.emitHeld(st.ctx, e, ef.Outcome, st.height)
			}
		case judge.Moved:
			err = st.report(e, ef.Transition)
		case judge.CapRefused:
			err = st.cap.emitRefusal(st.ctx)
		}
		if err != nil {
			return e, err
		}
	}
	return e, nil
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
