package breakerstore

import (
	"context"
	"fmt"

	"cosmossdk.io/collections"

	sdk "github.com/cosmos/cosmos-sdk/types"

	"github.com/inferenced/inferenced/appmetrics"
	"github.com/inferenced/inferenced/x/inference/breaker"
	"github.com/inferenced/inferenced/x/inference/judge"
	"github.com/inferenced/inferenced/x/inference/service"
	"github.com/inferenced/inferenced/x/inference/types"
)

// MissVerdict is what the step decided about one traffic miss (a judge
// effect of kind Counted, Excused or Held, on Executor), for the keeper to
// apply to the SPRT and to the agent's standing (judge.Standing), in the
// order the step reached them.
type MissVerdict struct {
	Executor sdk.AccAddress
	Effect   judge.Effect
}

// Block is what one block's step takes: the params in force and the
// block's attested samples.
type Block struct {
	Params   types.Params
	Attested Attestation
}

// Applied is what one block's step did: the miss verdicts it reached, in
// order, and how many attested and service samples it applied.
type Applied struct {
	Misses                      []MissVerdict
	AttestedOKs, AttestedMisses int
	ServiceOKs, ServiceMisses   int
}

// step is one block's breaker step: params, the exclusion cap, whether
// anything changed state and the verdicts reached so far, the records as
// the step left them (written at its end) and the group indices it looked
// up.
type step struct {
	s       Store
	ctx     context.Context
	height  int64
	p       judge.Params
	cap     *capTracker
	service service.View
	changed bool
	out     Applied
	w       *stepRecords
	// memberIndex caches the step's MemberIndex answers: the group does
	// not change during the step. Only looked up.
	memberIndex map[string]memberAt
}

type memberAt struct {
	index  uint32
	member bool
}

// Step is the breaker's one step per block, run before anything else in the
// block: it maps the block's attested samples to executors, promotes the
// EXCLUDED executors whose cooldown has passed, then applies the traffic
// outcomes queued by the previous block, then the attested samples, then
// the service samples, in that order. Selection and enforcement in this block and later see the result.
// It writes only the breaker's own collections: the miss verdicts it
// reaches are returned for the keeper to apply.
//
// Each record is written once, at the end, however many samples changed
// it (stepRecords), and a quiet executor's validators' sample is left out
// of its record and carried by the streaks item instead (streaks.go); the
// store it leaves reads as the one a write per sample left
// (TestStepMatchesLegacy).
func (s Store) Step(ctx context.Context, b Block) (Applied, error) {
	st, err := newStep(s, ctx, b)
	if err != nil {
		return Applied{}, err
	}
	attested, heldMisses, err := st.attestedSamples(b.Attested)
	if err != nil {
		// A fault reading the group costs the block its attested samples,
		// never the chain its liveness: the step still runs without them,
		// as the pre-blocker has always done.
		sdk.UnwrapSDKContext(ctx).Logger().Error("attested samples do not map to the epoch group; none applied",
			"module", types.ModuleName, "err", err)
		attested, heldMisses = nil, nil
	}
	view, err := viewService(b.Attested, b.Params.HealthCbServiceExcessPct)
	if err != nil {
		// As for the attested samples: the block loses its service
		// samples, the chain keeps its liveness.
		sdk.UnwrapSDKContext(ctx).Logger().Error("service rates do not fit the epoch group; none applied",
			"module", types.ModuleName, "err", err)
		view = service.View{}
	}
	st.service = view
	if err := st.promoteDue(); err != nil {
		return Applied{}, err
	}
	if err := st.applyTraffic(); err != nil {
		return Applied{}, err
	}
	if err := st.applyAttestedSamples(attested, heldMisses); err != nil {
		return Applied{}, err
	}
	if err := st.applyService(); err != nil {
		return Applied{}, err
	}
	if err := st.w.flush(); err != nil {
		return Applied{}, err
	}
	if st.changed {
		if err := s.reportGauges(ctx); err != nil {
			return Applied{}, err
		}
	}
	return st.out, nil
}

// newStep starts one block's step on the store as it is.
func newStep(s Store, ctx context.Context, b Block) (*step, error) {
	st := &step{
		s: s, ctx: ctx, height: sdk.UnwrapSDKContext(ctx).BlockHeight(),
		p:           judge.Params{Breaker: b.Params.BreakerParams(), Evidence: b.Params.EvidenceParams()},
		cap:         newCapTracker(s, b.Params.HealthCbMaxExcludedWeightPct),
		memberIndex: map[string]memberAt{},
	}
	var err error
	st.w, err = newStepRecords(s, ctx, st.height, st.memberIndexOf)
	return st, err
}

// promoteDue promotes the EXCLUDED executors whose cooldown has passed. A
// block in which the breaker holds no one has nothing to promote and opens
// no iterator.
func (st *step) promoteDue() error {
	if count, err := st.w.heldCount(); err != nil || count == 0 {
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
		before, err := st.w.load(key.K2())
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
		if err := st.w.save(before, after); err != nil {
			return err
		}
		if err := st.report(after, t); err != nil {
			return err
		}
	}
	return nil
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

// applyBatch applies one executor's queued samples to its record.
func (st *step) applyBatch(batch []queuedSample) error {
	before, err := st.w.load(batch[0].key.K1())
	if err != nil {
		return err
	}
	after := before
	if !before.stored {
		serving, err := st.servingNow(before.addr)
		if err != nil {
			return err
		}
		after = st.fresh(before, batch[0].sample.PriorOks, serving)
	}
	for _, q := range batch {
		probe := after.rec.ProbeInFlight && after.probe.is(q.sample.Agent, q.sample.InferenceId)
		if after, err = st.applyOutcome(after, q.sample, probe); err != nil {
			return err
		}
	}
	return st.w.save(before, after)
}

// applyOutcome applies one traffic outcome (x/inference/judge decides
// what it does) and records the effects.
func (st *step) applyOutcome(e entry, sample types.PendingSample, probe bool) (entry, error) {
	x, mayExclude, capErr := st.judged(e)
	x, effects := judge.Traffic(x, judge.Outcome{
		Agent: sample.Agent, Start: sample.StartHeight, End: sample.EndHeight, Miss: sample.Miss, Probe: probe,
	}, st.p, st.height, mayExclude)
	return st.record(e, x, effects, capErr)
}

// applyService applies the block's service samples, after everything else:
// an executor that this block's other samples gave a record hears its ok.
// Like the attested samples, a fault mapping them costs the block its
// service samples, never the chain its liveness.
func (st *step) applyService() error {
	samples, err := st.serviceSamples()
	if err != nil {
		sdk.UnwrapSDKContext(st.ctx).Logger().Error("service samples do not map to the epoch group; none applied",
			"module", types.ModuleName, "err", err)
		return nil
	}
	for _, a := range samples {
		if err := st.applyValidators(a, true); err != nil {
			return err
		}
		if a.miss {
			st.out.ServiceMisses++
		} else {
			st.out.ServiceOKs++
		}
	}
	appmetrics.Add(seriesServiceOK, st.out.ServiceOKs)
	appmetrics.Add(seriesServiceMiss, st.out.ServiceMisses)
	return nil
}

// applyAttested applies one attested verdict. An ok for an executor the
// breaker holds nothing on changes nothing and costs one read.
func (st *step) applyAttested(a attestedSample) error {
	return st.applyValidators(a, false)
}

// applyValidators applies one sample of a kind the validators attest
// (judge.Attested or judge.Service). A quiet executor's sample is left
// out of its record (stepRecords.skip): the judge would change nothing
// but the field the streaks item carries, and emit nothing.
func (st *step) applyValidators(a attestedSample, service bool) error {
	apply, visit, err := st.visit(&a, service)
	if err != nil || !visit {
		return err
	}
	before, err := st.w.load(a.executor)
	if err != nil {
		return err
	}
	if !before.stored && !a.miss {
		return nil
	}
	after := before
	if !before.stored {
		oks, err := st.s.priorSuccesses(st.ctx, a.executor)
		if err != nil {
			return err
		}
		after = st.fresh(before, oks, st.servingAt(a.index))
	}
	x, mayExclude, capErr := st.judged(after)
	x, effects := apply(x, a.miss, st.p, st.height, mayExclude)
	if after, err = st.record(after, x, effects, capErr); err != nil {
		return err
	}
	return st.w.save(before, after)
}

// judgeFunc is judge.Attested or judge.Service.
type judgeFunc func(judge.Executor, bool, judge.Params, int64, judge.MayExclude) (judge.Executor, []judge.Effect)

// visit leaves a quiet executor's sample out of its record (visit false),
// or returns the judge of the sample's kind with the executor's address
// looked up.
func (st *step) visit(a *attestedSample, service bool) (apply judgeFunc, visit bool, err error) {
	if st.w.quiet(a.index) {
		st.w.skip(a.index, a.miss, service)
		return nil, false, nil
	}
	apply = judge.Attested
	if service {
		apply = judge.Service
	}
	if a.executor == nil {
		if a.executor, err = st.memberAddress(a.index); err != nil {
			return nil, false, err
		}
	}
	return apply, true, nil
}

// fresh is the entry of an executor without a record as a new record
// starts it in this block: judge.Fresh, seen serving now if this block's
// service rates say so (a record-less executor hears no service ok, so
// its new record must learn it here: servingNow).
func (st *step) fresh(e entry, priorOks uint32, serving bool) entry {
	e = e.fresh(priorOks)
	if serving {
		e.rec.ServiceOKAt = st.height
	}
	return e
}

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
	return judge.Executor{Record: e.rec, Ledger: e.ledger, Scope: e.scope}, mayExclude, capErr
}

// record takes the judge's result into the entry and records its effects
// in order: every counted, held or excused miss is emitted and kept for
// the keeper, every state change is emitted and followed by the cap. The
// caller stores the entry.
func (st *step) record(e entry, x judge.Executor, effects []judge.Effect, capErr *error) (entry, error) {
	if *capErr != nil {
		return e, *capErr
	}
	e.rec, e.ledger, e.scope = x.Record, x.Ledger, x.Scope // save drops the probe's name once its slot is free
	for _, ef := range effects {
		var err error
		switch ef.Kind {
		case judge.Counted:
			err = st.s.emitCounted(st.ctx, e, ef.Verdict, st.height)
		case judge.Held:
			err = st.s.emitHeld(st.ctx, e, ef.Outcome, st.height)
		case judge.Moved:
			err = st.report(e, ef.Transition)
		case judge.CapRefused:
			err = st.cap.emitRefusal(st.ctx)
		case judge.Scoped:
			err = st.s.emitScoped(st.ctx, e, ef.Transition, st.height)
		}
		if err != nil {
			return e, err
		}
		if _, _, _, miss := judge.Standing(ef); miss {
			st.out.Misses = append(st.out.Misses, MissVerdict{Executor: e.addr, Effect: ef})
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
