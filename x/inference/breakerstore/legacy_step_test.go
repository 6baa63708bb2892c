package breakerstore

// The breaker's step as it was before the write-back step (commit
// bb35965e34f55b212f64072a51872f4c65f6e92a), kept verbatim for the
// differential test (equivalence_test.go) and the step benchmark
// (step_bench_test.go, step_parts_test.go): step.go from "type step
// struct" on, attest.go from "type attestedSample" on, service.go and
// cap.go without their headers, store.go from load on, with only these
// edits, so that it compiles beside today's code:
//
//	sed -E -e 's/\bs Store\b/s legacy/g' -e 's/^(\s+s\s+)Store$/\1legacy/' \
//	  -e 's/\*step\b/*legacyStep/g' -e 's/&step\{/\&legacyStep{/g' \
//	  -e 's/^type step struct/type legacyStep struct/' \
//	  -e 's/\b(attestedSample|capTracker|isOut|mergeAddresses|viewService)\b/legacy\u\1/g' \
//	  -e 's/\bnewCapTracker\b/newLegacyCapTracker/g' \
//	  -e 's| //nolint:forbidigo // telemetry takes float32; not consensus state||'
//
// then gofmt; since, its go-metrics telemetry calls count the appmetrics
// series instead, as today's code does. legacy embeds Store, so the helpers the write-back step did
// not change (the queue, the events, the entries, Store.save's and
// Store.load's own callers) are shared.

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"cosmossdk.io/collections"

	sdk "github.com/cosmos/cosmos-sdk/types"

	"github.com/inferenced/inferenced/appmetrics"
	"github.com/inferenced/inferenced/x/inference/breaker"
	"github.com/inferenced/inferenced/x/inference/judge"
	"github.com/inferenced/inferenced/x/inference/service"
	"github.com/inferenced/inferenced/x/inference/types"
	"github.com/inferenced/inferenced/x/inference/verdict"
)

// legacy is a Store stepped by the code of before the write-back step.
type legacy struct{ Store }

// step is one block's breaker step: params, the exclusion cap, whether
// anything changed state and the verdicts reached so far.
type legacyStep struct {
	s       legacy
	ctx     context.Context
	height  int64
	p       judge.Params
	cap     *legacyCapTracker
	service service.View
	changed bool
	out     Applied
}

// Step is the breaker's one step per block, run before anything else in the
// block: it maps the block's attested samples to executors, promotes the
// EXCLUDED executors whose cooldown has passed, then applies the traffic
// outcomes queued by the previous block, then the attested samples, then
// the service samples, in that order. Selection and enforcement in this block and later see the result.
// It writes only the breaker's own collections: the miss verdicts it
// reaches are returned for the keeper to apply.
func (s legacy) Step(ctx context.Context, b Block) (Applied, error) {
	attested, err := s.attestedSamples(ctx, b.Attested)
	if err != nil {
		// A fault reading the group costs the block its attested samples,
		// never the chain its liveness: the step still runs without them,
		// as the pre-blocker has always done.
		sdk.UnwrapSDKContext(ctx).Logger().Error("attested samples do not map to the epoch group; none applied",
			"module", types.ModuleName, "err", err)
		attested = nil
	}
	view, err := legacyViewService(b.Attested, b.Params.HealthCbServiceExcessPct)
	if err != nil {
		// As for the attested samples: the block loses its service
		// samples, the chain keeps its liveness.
		sdk.UnwrapSDKContext(ctx).Logger().Error("service rates do not fit the epoch group; none applied",
			"module", types.ModuleName, "err", err)
		view = service.View{}
	}
	st := &legacyStep{
		s: s, ctx: ctx, height: sdk.UnwrapSDKContext(ctx).BlockHeight(),
		p:       judge.Params{Breaker: b.Params.BreakerParams(), Evidence: b.Params.EvidenceParams()},
		cap:     newLegacyCapTracker(s, b.Params.HealthCbMaxExcludedWeightPct),
		service: view,
	}
	if err := st.promoteDue(); err != nil {
		return Applied{}, err
	}
	if err := st.applyTraffic(); err != nil {
		return Applied{}, err
	}
	for _, a := range attested {
		if err := st.applyAttested(a); err != nil {
			return Applied{}, err
		}
		if a.miss {
			st.out.AttestedMisses++
		} else {
			st.out.AttestedOKs++
		}
	}
	if err := st.applyService(); err != nil {
		return Applied{}, err
	}
	if st.changed {
		if err := s.reportGauges(ctx); err != nil {
			return Applied{}, err
		}
	}
	return st.out, nil
}

// promoteDue promotes the EXCLUDED executors whose cooldown has passed. A
// block in which the breaker holds no one has nothing to promote and opens
// no iterator.
func (st *legacyStep) promoteDue() error {
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

// applyTraffic applies and removes every queued traffic outcome, executor by
// executor in address order, each in the order it was observed. An
// executor's record is loaded once and stored once, after all its samples,
// so a record is never dropped and re-created halfway through a block.
// A block with nothing queued opens no iterator.
func (st *legacyStep) applyTraffic() error {
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
func (st *legacyStep) applyBatch(batch []queuedSample) error {
	before, err := st.s.load(st.ctx, batch[0].key.K1())
	if err != nil {
		return err
	}
	after := before
	if !before.stored {
		if after, err = st.fresh(before, batch[0].sample.PriorOks); err != nil {
			return err
		}
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
func (st *legacyStep) applyOutcome(e entry, sample types.PendingSample, probe bool) (entry, error) {
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
func (st *legacyStep) applyService() error {
	samples, err := st.s.serviceSamples(st.ctx, st.service)
	if err != nil {
		sdk.UnwrapSDKContext(st.ctx).Logger().Error("service samples do not map to the epoch group; none applied",
			"module", types.ModuleName, "err", err)
		return nil
	}
	for _, a := range samples {
		if err := st.applyValidators(a, judge.Service); err != nil {
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
func (st *legacyStep) applyAttested(a legacyAttestedSample) error {
	return st.applyValidators(a, judge.Attested)
}

// applyValidators applies one sample of a kind the validators attest
// (judge.Attested or judge.Service).
func (st *legacyStep) applyValidators(a legacyAttestedSample, apply func(judge.Executor, bool, judge.Params, int64, judge.MayExclude) (judge.Executor, []judge.Effect)) error {
	before, err := st.s.load(st.ctx, a.executor)
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
		if after, err = st.fresh(before, oks); err != nil {
			return err
		}
	}
	x, mayExclude, capErr := st.judged(after)
	x, effects := apply(x, a.miss, st.p, st.height, mayExclude)
	if after, err = st.record(after, x, effects, capErr); err != nil {
		return err
	}
	return st.s.save(st.ctx, before, after)
}

// fresh is the entry of an executor without a record as a new record
// starts it in this block: judge.Fresh, seen serving now if this block's
// service rates say so (a record-less executor hears no service ok, so
// its new record must learn it here).
func (st *legacyStep) fresh(e entry, priorOks uint32) (entry, error) {
	e = e.fresh(priorOks)
	serving, err := st.servingNow(e.addr)
	if err != nil {
		return entry{}, err
	}
	if serving {
		e.rec.ServiceOKAt = st.height
	}
	return e, nil
}

// judged returns the entry as the judge sees it, and the exclusion cap's
// question for it; the cap's fault, if any, lands in *capErr.
func (st *legacyStep) judged(e entry) (judge.Executor, judge.MayExclude, *error) {
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
func (st *legacyStep) record(e entry, x judge.Executor, effects []judge.Effect, capErr *error) (entry, error) {
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
func (st *legacyStep) report(e entry, t breaker.Transition) error {
	if !t.Changed() {
		return nil
	}
	if err := st.cap.moved(st.ctx, e.addr, t.From, t.To); err != nil {
		return err
	}
	st.changed = true
	return st.s.emitTransition(st.ctx, e, t, st.height)
}

// legacyAttestedSample is one attested verdict mapped to its executor.
type legacyAttestedSample struct {
	executor sdk.AccAddress
	miss     bool
}

// attestedSamples maps an attestation to executors, in group order. An ok
// for an executor without a breaker record or a queued outcome changes
// nothing: only misses and the executors the breaker holds or is about to
// hold are mapped to addresses. Samples that are not a packing of Members
// map to nothing (the decoder never lets them through; the length check
// keeps a caller's mistake from reading past them).
func (s legacy) attestedSamples(ctx context.Context, a Attestation) ([]legacyAttestedSample, error) {
	if a.Members <= 0 || len(a.Samples) != verdict.PackedLen(a.Members) {
		return nil, nil
	}
	held, err := s.heldIndices(ctx)
	if err != nil {
		return nil, err
	}
	var out []legacyAttestedSample
	for i := range a.Members {
		v := verdict.At(a.Samples, i)
		switch {
		case v == verdict.Miss, v == verdict.OK && held[uint32(i)]:
		default:
			continue
		}
		m, err := s.reads.MemberAt(ctx, uint32(i))
		if err != nil {
			return nil, err
		}
		addr, err := s.ac.StringToBytes(m.Address)
		if err != nil {
			return nil, fmt.Errorf("epoch member %d address: %w", i, err)
		}
		out = append(out, legacyAttestedSample{executor: addr, miss: v == verdict.Miss})
	}
	return out, nil
}

// heldIndices are the group indices of the executors the breaker holds a
// record on or has outcomes queued for (those whose ok the step can
// change); the map is only looked up.
func (s legacy) heldIndices(ctx context.Context) (map[uint32]bool, error) {
	addrs, err := s.held(ctx)
	if err != nil {
		return nil, err
	}
	out := make(map[uint32]bool, len(addrs))
	for _, addr := range addrs {
		i, ok, err := s.reads.MemberIndex(ctx, addr)
		if err != nil {
			return nil, fmt.Errorf("look up held executor %s: %w", addr, err)
		}
		if ok {
			out[i] = true
		}
	}
	return out, nil
}

// held is the executors the breaker holds a record on (few), in address
// order, and those with an outcome queued: the step applies the queued
// outcomes before the attested samples, so an executor with one queued
// may hold a record by then, and its ok must reach it too. Most blocks
// hold no one, and learn it from the record count without opening an
// iterator.
func (s legacy) held(ctx context.Context) ([]sdk.AccAddress, error) {
	count, err := s.heldCount(ctx)
	if err != nil {
		return nil, err
	}
	var records []sdk.AccAddress
	if count > 0 {
		if err := s.records.Walk(ctx, nil, func(addr sdk.AccAddress, _ types.ExecutorHealth) (bool, error) {
			records = append(records, addr)
			return false, nil
		}); err != nil {
			return nil, fmt.Errorf("walk breaker records: %w", err)
		}
	}
	queued, err := s.queuedExecutors(ctx)
	if err != nil {
		return nil, err
	}
	return legacyMergeAddresses(records, queued), nil
}

// legacyMergeAddresses merges two address-ordered lists without repeats, in one
// pass whatever their sizes.
func legacyMergeAddresses(a, b []sdk.AccAddress) []sdk.AccAddress {
	out := make([]sdk.AccAddress, 0, len(a)+len(b))
	for len(a) > 0 && len(b) > 0 {
		switch c := bytes.Compare(a[0], b[0]); {
		case c < 0:
			out, a = append(out, a[0]), a[1:]
		case c > 0:
			out, b = append(out, b[0]), b[1:]
		default:
			out, a, b = append(out, a[0]), a[1:], b[1:]
		}
	}
	return append(append(out, a...), b...)
}

// legacyViewService decodes the block's service rates once (service.NewView).
// Rates that do not fit the group (which the bundle's decoder rules out)
// are an error: the caller then applies no service sample.
func legacyViewService(a Attestation, excess uint64) (service.View, error) {
	return service.NewView(a.Service, a.Members, excess)
}

// servingNow reports whether this block's service rates see the executor
// serving (a service ok): what a record created before the block's service
// samples are applied starts from, so that traffic evidence meeting an
// executor the canaries see serving is weighed as such from its first
// trip.
func (st *legacyStep) servingNow(addr sdk.AccAddress) (bool, error) {
	if st.service.Rates == nil {
		return false, nil
	}
	i, member, err := st.s.reads.MemberIndex(st.ctx, addr)
	if err != nil || !member {
		return false, err
	}
	has, miss := st.service.Sample(int(i))
	return has && !miss, nil
}

// serviceSamples maps the block's service view to samples: a miss for
// every executor whose rate exceeds the peers' median by more than the
// excess, an ok for every executor the breaker holds whose rate is within
// half of it (an ok for anyone else changes nothing). Executors without a
// rate, or in between, get no sample.
func (s legacy) serviceSamples(ctx context.Context, v service.View) ([]legacyAttestedSample, error) {
	var held map[uint32]bool
	var out []legacyAttestedSample
	for i := range v.Rates {
		has, miss := v.Sample(i)
		if !has {
			continue
		}
		if !miss {
			if held == nil {
				var err error
				if held, err = s.heldIndices(ctx); err != nil {
					return nil, err
				}
			}
			if !held[uint32(i)] {
				continue
			}
		}
		m, err := s.reads.MemberAt(ctx, uint32(i))
		if err != nil {
			return nil, err
		}
		addr, err := s.ac.StringToBytes(m.Address)
		if err != nil {
			return nil, fmt.Errorf("epoch member %d address: %w", i, err)
		}
		out = append(out, legacyAttestedSample{executor: addr, miss: miss})
	}
	return out, nil
}

// legacyCapTracker enforces health_cb_max_excluded_weight_pct within one block's
// step. On the first exclusion the block attempts (most attempt none) it
// reads the weight of the executors already out, through the gates (one
// per EXCLUDED or PROBE executor), and follows the step's transitions after
// that; model totals come from the keeper (Reads). Maps are only looked up, never
// iterated.
type legacyCapTracker struct {
	s        legacy
	pct      uint64
	loaded   bool
	total    map[string]uint64 // model -> epoch weight, read on demand
	excluded map[string]uint64 // model -> weight of EXCLUDED and PROBE members
	// refused are the refusals admit decided and the step has not emitted
	// yet: emitted in the order of the step's effects (emitRefusal).
	refused []*types.EventExclusionCapped
}

func newLegacyCapTracker(s legacy, pct uint64) *legacyCapTracker {
	return &legacyCapTracker{s: s, pct: pct}
}

func legacyIsOut(s breaker.State) bool { return s != breaker.Healthy }

func (c *legacyCapTracker) load(ctx context.Context) error {
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
func (c *legacyCapTracker) add(ctx context.Context, addr sdk.AccAddress, in bool) error {
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
func (c *legacyCapTracker) moved(ctx context.Context, addr sdk.AccAddress, from, to breaker.State) error {
	if !c.loaded || legacyIsOut(from) == legacyIsOut(to) {
		return nil
	}
	return c.add(ctx, addr, legacyIsOut(to))
}

func (c *legacyCapTracker) modelWeight(ctx context.Context, model string) (uint64, error) {
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
func (c *legacyCapTracker) admit(ctx context.Context, addr sdk.AccAddress, height int64) (bool, error) {
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
func (c *legacyCapTracker) emitRefusal(ctx context.Context) error {
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

// load returns an executor's entry; an executor without a record is
// HEALTHY with no recent misses.
func (s legacy) load(ctx context.Context, addr sdk.AccAddress) (entry, error) {
	h, err := s.records.Get(ctx, addr)
	if errors.Is(err, collections.ErrNotFound) {
		return entry{addr: addr}, nil
	}
	if err != nil {
		return entry{}, fmt.Errorf("load breaker record of %s: %w", addr, err)
	}
	return entryOf(addr, h), nil
}

// save is the one writer of records and everything derived from them: it
// writes an entry that changed from before, keeps the cooldown index, the
// gate and the record count in step, and deletes a record that has become
// plain (a fresh executor needs none).
func (s legacy) save(ctx context.Context, before, after entry) error {
	if !after.rec.ProbeInFlight {
		after.probe = probeRef{}
	}
	if before.stored && before.same(after) {
		return nil
	}
	if before.stored && before.rec.State == breaker.Excluded {
		if err := s.cooldowns.Remove(ctx, collections.Join(before.rec.EligibleAt(), before.addr)); err != nil {
			return fmt.Errorf("unindex cooldown of %s: %w", before.addr, err)
		}
	}
	if after.plain() && !before.stored {
		return nil
	}
	h, err := after.proto(s.ac)
	if err != nil {
		return err
	}
	if err := s.syncGate(ctx, h.Address, before, after); err != nil {
		return err
	}
	if after.plain() {
		if err := s.records.Remove(ctx, after.addr); err != nil {
			return fmt.Errorf("drop breaker record of %s: %w", after.addr, err)
		}
		return s.countRecords(ctx, -1)
	}
	if after.rec.State == breaker.Excluded {
		if err := s.cooldowns.Set(ctx, collections.Join(after.rec.EligibleAt(), after.addr)); err != nil {
			return fmt.Errorf("index cooldown of %s: %w", after.addr, err)
		}
	}
	if err := s.records.Set(ctx, after.addr, h); err != nil {
		return fmt.Errorf("store breaker record of %s: %w", after.addr, err)
	}
	if !before.stored {
		return s.countRecords(ctx, +1)
	}
	return nil
}

// syncGate keeps the gate of address in step with a record change.
func (s legacy) syncGate(ctx context.Context, address string, before, after entry) error {
	was, hadGate := breaker.GateOf(before.rec)
	hadGate = hadGate && before.stored
	now, hasGate := breaker.GateOf(after.rec)
	switch {
	case hasGate && (!hadGate || now != was):
		if err := s.gates.Set(ctx, address, uint64(now)); err != nil {
			return fmt.Errorf("store health gate: %w", err)
		}
	case !hasGate && hadGate:
		if err := s.gates.Remove(ctx, address); err != nil {
			return fmt.Errorf("drop health gate: %w", err)
		}
	}
	return nil
}

// heldCount is the number of breaker records, read without an iterator.
func (s legacy) heldCount(ctx context.Context) (uint64, error) {
	n, err := s.recordCount.Get(ctx)
	if errors.Is(err, collections.ErrNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("load breaker record count: %w", err)
	}
	return n, nil
}

// countRecords keeps recordCount equal to the number of records after one
// is added (+1) or removed (-1).
func (s legacy) countRecords(ctx context.Context, delta int) error {
	n, err := s.heldCount(ctx)
	if err != nil {
		return err
	}
	switch {
	case delta < 0 && n == 0:
		return errors.New("breaker record count would go below zero")
	case delta < 0:
		n--
	default:
		n++
	}
	if n == 0 {
		if err := s.recordCount.Remove(ctx); err != nil {
			return fmt.Errorf("drop breaker record count: %w", err)
		}
		return nil
	}
	if err := s.recordCount.Set(ctx, n); err != nil {
		return fmt.Errorf("store breaker record count: %w", err)
	}
	return nil
}

// priorSuccesses is the history a new record of addr starts with: its
// successes this epoch, up to a full window.
func (s legacy) priorSuccesses(ctx context.Context, addr sdk.AccAddress) (uint32, error) {
	n, err := s.reads.EpochSuccesses(ctx, addr)
	if err != nil {
		return 0, err
	}
	return breaker.Fill(n), nil
}

// member is the current epoch member at addr, if it is one.
func (s legacy) member(ctx context.Context, addr sdk.AccAddress) (types.EpochMember, bool, error) {
	i, ok, err := s.reads.MemberIndex(ctx, addr)
	if err != nil || !ok {
		return types.EpochMember{}, false, err
	}
	m, err := s.reads.MemberAt(ctx, i)
	if err != nil {
		return types.EpochMember{}, false, err
	}
	return m, true, nil
}
