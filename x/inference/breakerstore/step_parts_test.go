package breakerstore

import (
	"context"
	"fmt"
	"time"

	"cosmossdk.io/collections"

	sdk "github.com/cosmos/cosmos-sdk/types"

	"github.com/inferenced/inferenced/x/inference/breaker"
	"github.com/inferenced/inferenced/x/inference/judge"
	"github.com/inferenced/inferenced/x/inference/service"
)

// The step benchmark's split of one block's step into parts. Each driver
// below is its step (Store.Step, legacy.Step) taken apart, calling the
// same functions in the same order with a clock between them;
// TestStepPartsMatchStep holds each driver to the step it takes apart
// (the same store, events and result, block by block).
//
// Parts, for each sample a pass applies:
//   - map: the attestation or the service view mapped to executors
//     (today: the held bits against the samples, a quiet executor's
//     sample left out of its record, MemberAt and a bech32 decode for
//     every sample visited; legacy: the records walked and every held
//     executor looked up in each pass, and MemberAt and a bech32 decode
//     for every sample);
//   - load: the executor's entry (a store read and a decoding; today
//     read through the streaks item, or the entry the step saved), and a
//     new record's start (its successes this epoch);
//   - judge: judge.Attested or judge.Service, with the cap's question;
//   - events: the effects recorded (events, the cap following a
//     transition);
//   - indexes: the cooldown entry, the gate and the record count (today:
//     the write-back bookkeeping too);
//   - write: the record encoded and written (legacy: in each save; today:
//     once per record, in flush, with the streaks item and the held bits);
//   - other: promotions, traffic, gauges.
const (
	partMap = iota
	partLoad
	partJudge
	partEvents
	partIndexes
	partWrite
	partOther
	numParts
)

var partNames = [numParts]string{"map", "load", "judge", "events", "indexes", "write", "other"}

// passParts are one pass's part times: the attested pass, the service
// pass, and the rest of the step (promotions, traffic, flush, gauges).
type passParts [numParts]time.Duration

type stepParts struct {
	attested, service, rest passParts
}

func (p stepParts) total() time.Duration {
	var t time.Duration
	for i := range numParts {
		t += p.attested[i] + p.service[i] + p.rest[i]
	}
	return t
}

// clock adds the time since its last tick to a part.
type clock struct{ last time.Time }

func (c *clock) tick(p *passParts, part int) {
	now := time.Now()
	p[part] += now.Sub(c.last)
	c.last = now
}

// partsStepper is a driver as a stepper, adding its parts to *pt.
func partsStepper(name string, run func(Store, sdk.Context, Block, *stepParts) (Applied, error), pt *stepParts) stepper {
	return stepper{name, func(s Store, ctx sdk.Context, b Block) (Applied, error) { return run(s, ctx, b, pt) }}
}

// todayParts is Store.Step taken apart.
func todayParts(s Store, ctx sdk.Context, b Block, pt *stepParts) (Applied, error) {
	c := clock{time.Now()}
	st, err := newStep(s, ctx, b)
	if err != nil {
		return Applied{}, err
	}
	attested, heldMisses, err := st.attestedSamples(b.Attested)
	if err != nil {
		attested, heldMisses = nil, nil
	}
	c.tick(&pt.attested, partMap)
	view, err := viewService(b.Attested, b.Params.HealthCbServiceExcessPct)
	if err != nil {
		view = service.View{}
	}
	st.service = view
	if err := st.promoteDue(); err != nil {
		return Applied{}, err
	}
	if err := st.applyTraffic(); err != nil {
		return Applied{}, err
	}
	c.tick(&pt.rest, partOther)
	if err := st.eachAttested(attested, heldMisses, func(a attestedSample) error {
		return todayApply(st, a, false, &c, &pt.attested)
	}); err != nil {
		return Applied{}, err
	}
	c.tick(&pt.attested, partOther)
	samples, err := st.serviceSamples()
	if err != nil {
		samples = nil
	}
	c.tick(&pt.service, partMap)
	for _, a := range samples {
		if err := todayApply(st, a, true, &c, &pt.service); err != nil {
			return Applied{}, err
		}
		if a.miss {
			st.out.ServiceMisses++
		} else {
			st.out.ServiceOKs++
		}
	}
	c.tick(&pt.service, partOther)
	if err := st.w.flush(); err != nil {
		return Applied{}, err
	}
	c.tick(&pt.rest, partWrite)
	if st.changed {
		if err := s.reportGauges(ctx); err != nil {
			return Applied{}, err
		}
	}
	c.tick(&pt.rest, partOther)
	return st.out, nil
}

// todayApply is step.applyValidators taken apart.
func todayApply(st *step, a attestedSample, service bool, c *clock, pt *passParts) error {
	apply, visit, err := st.visit(&a, service)
	c.tick(pt, partMap)
	if err != nil || !visit {
		return err
	}
	before, err := st.w.load(a.executor)
	if err != nil {
		return err
	}
	if !before.stored && !a.miss {
		c.tick(pt, partLoad)
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
	c.tick(pt, partLoad)
	x, mayExclude, capErr := st.judged(after)
	x, effects := apply(x, a.miss, st.p, st.height, mayExclude)
	c.tick(pt, partJudge)
	if after, err = st.record(after, x, effects, capErr); err != nil {
		return err
	}
	c.tick(pt, partEvents)
	err = st.w.save(before, after)
	c.tick(pt, partIndexes)
	return err
}

// legacyParts is legacy.Step taken apart.
func legacyParts(s Store, ctx sdk.Context, b Block, pt *stepParts) (Applied, error) {
	c := clock{time.Now()}
	l := legacy{s}
	attested, err := l.attestedSamples(ctx, b.Attested)
	if err != nil {
		attested = nil
	}
	c.tick(&pt.attested, partMap)
	view, err := legacyViewService(b.Attested, b.Params.HealthCbServiceExcessPct)
	if err != nil {
		view = service.View{}
	}
	st := &legacyStep{
		s: l, ctx: ctx, height: ctx.BlockHeight(),
		p:       judge.Params{Breaker: b.Params.BreakerParams(), Evidence: b.Params.EvidenceParams()},
		cap:     newLegacyCapTracker(l, b.Params.HealthCbMaxExcludedWeightPct),
		service: view,
	}
	if err := st.promoteDue(); err != nil {
		return Applied{}, err
	}
	if err := st.applyTraffic(); err != nil {
		return Applied{}, err
	}
	c.tick(&pt.rest, partOther)
	for _, a := range attested {
		if err := legacyApply(st, a, judge.Attested, &c, &pt.attested); err != nil {
			return Applied{}, err
		}
		if a.miss {
			st.out.AttestedMisses++
		} else {
			st.out.AttestedOKs++
		}
	}
	c.tick(&pt.attested, partOther)
	samples, err := l.serviceSamples(ctx, st.service)
	if err != nil {
		samples = nil
	}
	c.tick(&pt.service, partMap)
	for _, a := range samples {
		if err := legacyApply(st, a, judge.Service, &c, &pt.service); err != nil {
			return Applied{}, err
		}
		if a.miss {
			st.out.ServiceMisses++
		} else {
			st.out.ServiceOKs++
		}
	}
	c.tick(&pt.service, partOther)
	if st.changed {
		if err := s.reportGauges(ctx); err != nil {
			return Applied{}, err
		}
	}
	c.tick(&pt.rest, partOther)
	return st.out, nil
}

// legacyApply is legacyStep.applyValidators taken apart.
func legacyApply(st *legacyStep, a legacyAttestedSample, apply func(judge.Executor, bool, judge.Params, int64, judge.MayExclude) (judge.Executor, []judge.Effect), c *clock, pt *passParts) error {
	before, err := st.s.load(st.ctx, a.executor)
	if err != nil {
		return err
	}
	if !before.stored && !a.miss {
		c.tick(pt, partLoad)
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
	c.tick(pt, partLoad)
	x, mayExclude, capErr := st.judged(after)
	x, effects := apply(x, a.miss, st.p, st.height, mayExclude)
	c.tick(pt, partJudge)
	if after, err = st.record(after, x, effects, capErr); err != nil {
		return err
	}
	c.tick(pt, partEvents)
	return legacySaveParts(st.s, st.ctx, before, after, c, pt)
}

// legacySaveParts is legacy.save with the record's encoding and write
// (write) told apart from the rest (indexes).
func legacySaveParts(s legacy, ctx context.Context, before, after entry, c *clock, pt *passParts) error {
	defer c.tick(pt, partIndexes)
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
	c.tick(pt, partIndexes)
	h, err := after.proto(s.ac)
	if err != nil {
		return err
	}
	c.tick(pt, partWrite)
	if err := s.syncGate(ctx, h.Address, before, after); err != nil {
		return err
	}
	if after.plain() {
		c.tick(pt, partIndexes)
		if err := s.records.Remove(ctx, after.addr); err != nil {
			return fmt.Errorf("drop breaker record of %s: %w", after.addr, err)
		}
		c.tick(pt, partWrite)
		return s.countRecords(ctx, -1)
	}
	if after.rec.State == breaker.Excluded {
		if err := s.cooldowns.Set(ctx, collections.Join(after.rec.EligibleAt(), after.addr)); err != nil {
			return fmt.Errorf("index cooldown of %s: %w", after.addr, err)
		}
	}
	c.tick(pt, partIndexes)
	if err := s.records.Set(ctx, after.addr, h); err != nil {
		return fmt.Errorf("store breaker record of %s: %w", after.addr, err)
	}
	c.tick(pt, partWrite)
	if !before.stored {
		return s.countRecords(ctx, +1)
	}
	return nil
}
