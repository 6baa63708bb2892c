package monitor

import (
	"container/heap"
	"context"
	"time"

	"github.com/inferenced/inferenced/monitor/cusum"
	"github.com/inferenced/inferenced/x/inference/service"
)

// canaryPlan is the canary side of the schedule: its settings and the
// queue of executors waiting for their next canary. Like the rest of the
// schedule it is pure (the caller passes the time in) and guarded by
// Monitor.mu.
//
// An executor is canaried every suspect interval while its CUSUM is above
// 0 or a burst lasts, every interval otherwise. A failed canary raises the
// sum and oks bring it back to 0, so one miss at the baseline rate costs a
// few suspect-rate canaries (seven at 5% / 25%) rather than a whole
// window, and a degraded executor is canaried fast until the evidence
// clears. The burst is the chain's trigger, an edge so it is bounded:
// Member.Suspect going from false to true (or a new member marked) starts
// window suspect-rate canaries; a new mark during a burst restarts it.
// Never two canaries in flight to one executor.
type canaryPlan struct {
	enabled           bool
	interval, suspect time.Duration
	window            int
	ttl               time.Duration
	rule              cusum.Rule
	// salt rotates the first canaries' offsets, per validator, apart from
	// the probes' order.
	salt uint64
	// jitter draws a gap around a mean: nil is the mean itself (tests);
	// the monitor draws within +-25%, so no executor sees a fixed phase.
	jitter  func(mean time.Duration) time.Duration
	waiting canaryQueue
}

func newCanaryPlan(cfg Config, rule cusum.Rule, salt uint64, jitter func(time.Duration) time.Duration) canaryPlan {
	return canaryPlan{enabled: cfg.CanaryEnabled, interval: cfg.CanaryInterval, suspect: cfg.CanarySuspectInterval,
		window: cfg.CanaryWindow, ttl: cfg.CanaryTTL, rule: rule, salt: salt, jitter: jitter}
}

// canaryState is one executor's canary side.
type canaryState struct {
	// seen: adopted once (a new target gets its first due time).
	seen bool
	// model is what its canaries ask for: the member's first model, ""
	// when it serves none or canaries are off (then none is sent).
	model string
	// chainSuspect is the member's Suspect flag of the last group read.
	chainSuspect bool
	// burst is how many suspect-rate canaries are left of the chain's
	// last trigger.
	burst int
	ring  ring
	// cusum weighs the same outcomes as the ring; it gates the report and
	// the suspect rate.
	cusum cusum.State
	// due is when the next canary may start, while waiting (pos >= 0).
	due      time.Time
	pos      int
	inFlight bool
	// started is when the last canary started (zero: none yet).
	started time.Time
	// cancel cancels the canary in flight (the executor left the group).
	cancel context.CancelFunc
}

// abort cancels the canary in flight, if any.
func (c *canaryState) abort() {
	if c.cancel != nil {
		c.cancel()
		c.cancel = nil
	}
}

// report is the failed share of the outcomes fresh at now (no older than
// ttl) while the CUSUM is alarmed, 0% while it is not, or Unknown with
// fewer than minSamples of them or no model. Reporting 0% below the alarm
// keeps the misses an honest executor makes at the baseline rate out of
// the attested rates: a short window alone would show them as spikes.
func (c *canaryState) report(now time.Time, ttl time.Duration, minSamples int) service.Report {
	if c.model == "" {
		return service.Unknown
	}
	misses, total := c.ring.count(now.Add(-ttl))
	switch {
	case total < minSamples:
		return service.Unknown
	case !c.cusum.Alarmed:
		return 0
	}
	return service.Rate(misses, total)
}

// suspect reports whether the executor is suspect: the chain marks it, or
// its CUSUM holds evidence of misses (it is canaried at the suspect rate).
func (c *canaryState) suspect() bool {
	return c.chainSuspect || c.cusum.Sum > 0
}

// ring holds an executor's last window canary outcomes, with their end
// times; the oldest is overwritten first.
type ring struct {
	at   []time.Time
	ok   []bool
	next int
}

func (r *ring) add(window int, at time.Time, ok bool) {
	if len(r.at) < window {
		r.at, r.ok = append(r.at, at), append(r.ok, ok)
		return
	}
	r.at[r.next], r.ok[r.next] = at, ok
	r.next = (r.next + 1) % len(r.at)
}

// count is the misses and outcomes that ended at since or later.
func (r *ring) count(since time.Time) (misses, total int) {
	for i, at := range r.at {
		if !at.Before(since) {
			total++
			if !r.ok[i] {
				misses++
			}
		}
	}
	return misses, total
}

func (p *canaryPlan) gap(mean time.Duration) time.Duration {
	if p.jitter == nil {
		return mean
	}
	return p.jitter(mean)
}

// trigger starts a burst at now: window canaries at the suspect rate, the
// first as soon as the rate allows.
func (p *canaryPlan) trigger(c *canaryState, now time.Time) {
	c.burst = p.window
	if c.inFlight {
		return // its end schedules the next at the suspect rate
	}
	next := now
	if !c.started.IsZero() && c.started.Add(p.suspect).After(now) {
		next = c.started.Add(p.suspect)
	}
	if next.Before(c.due) {
		c.due = next
	}
}

// adoptCanaries takes the members' models and suspicion (members are the
// schedule's targets, index for index). A new target's first canary is
// due within the coming interval (the suspect one if the chain marks it,
// which starts its burst), at an offset spread evenly over it in this
// validator's order; a kept one keeps its outcomes, due time and canary in
// flight. requeue says the targets changed. It reports whether anything
// changed.
func (s *schedule) adoptCanaries(members []Member, now time.Time, requeue bool) bool {
	p := &s.canary
	changed := requeue
	for i, t := range s.targets {
		mem, c := members[i], &t.c
		model := mem.Model
		if !p.enabled {
			model = ""
		}
		if !c.seen {
			c.seen, c.model, c.chainSuspect = true, model, mem.Suspect
			every := p.interval
			if mem.Suspect {
				c.burst, every = p.window, p.suspect
			}
			c.due = now.Add(spread(i, len(members), p.salt, every))
			changed = true
			continue
		}
		if c.model != model {
			c.model, changed = model, true
		}
		if mem.Suspect && !c.chainSuspect && c.model != "" {
			p.trigger(c, now)
			changed = true
		}
		c.chainSuspect = mem.Suspect
	}
	if changed {
		p.requeue(s.targets)
	}
	return changed
}

// requeue makes the queue every target with a model and no canary in
// flight.
func (p *canaryPlan) requeue(targets []*target) {
	p.waiting = p.waiting[:0]
	for _, t := range targets {
		t.c.pos = -1
		if t.c.model != "" && !t.c.inFlight {
			t.c.pos = len(p.waiting)
			p.waiting = append(p.waiting, t)
		}
	}
	heap.Init(&p.waiting)
}

// takeCanary returns the executor whose canary is most overdue, marked in
// flight, and the model to ask for; or nil and how long until the next
// one is due (0 if none is waiting).
//
// An executor whose latest health probe failed is not canaried: its due
// time moves on by a gap and its burst waits. Liveness is the probe's to
// report, a failed canary of a dark executor would be no outcome anyway,
// and a hanging one would hold a slot for a whole canary timeout. It also
// keeps canaries from feeding a monitor's own overload: a validator whose
// probes time out for want of CPU sees executors dark, and bursting at
// the ones the chain then holds out would add the load that made them
// time out (measured on the scale scenario: tests/e2e/README.md).
func (s *schedule) takeCanary(now time.Time) (*target, string, time.Duration) {
	p := &s.canary
	q := &p.waiting
	for len(*q) > 0 {
		first := (*q)[0]
		if first.c.due.After(now) {
			return nil, "", first.c.due.Sub(now)
		}
		t := heap.Pop(q).(*target)
		if t.set && !t.ok {
			t.c.due = now.Add(p.gap(p.mean(&t.c)))
			heap.Push(q, t)
			continue
		}
		t.c.inFlight, t.c.started = true, now
		if t.c.burst > 0 {
			t.c.burst--
		}
		return t, t.c.model, 0
	}
	return nil, "", 0
}

// mean is the mean gap before c's next canary: the suspect interval while
// a burst lasts or the CUSUM is above 0, the background one otherwise.
func (p *canaryPlan) mean(c *canaryState) time.Duration {
	if c.burst > 0 || c.cusum.Sum > 0 {
		return p.suspect
	}
	return p.interval
}

// finishCanary records the canary of t that started at start and ended at
// end, in the ring and the CUSUM, and queues t again: next due a gap after
// start (the suspect one while a burst lasts or the sum is above 0), or at
// end if it ran longer. A cancelled canary
// (Stop, or t left the group) is no outcome, and so is a failed canary
// of an executor whose latest health probe failed: liveness is the health
// probe's to report, and a dark spell kept in the service window would
// re-exclude the executor on service right after it came back. It
// reports whether t is now the first due.
func (s *schedule) finishCanary(t *target, start, end time.Time, ok, cancelled bool) bool {
	p, c := &s.canary, &t.c
	c.inFlight, c.cancel = false, nil
	if t.retired {
		return false
	}
	if dark := t.set && !t.ok; !cancelled && (ok || !dark) {
		c.ring.add(p.window, end, ok)
		c.cusum = p.rule.Step(c.cusum, !ok)
	}
	if c.model == "" {
		return false
	}
	c.due = start.Add(p.gap(p.mean(c)))
	if end.After(c.due) {
		c.due = end
	}
	heap.Push(&p.waiting, t)
	return c.pos == 0
}

// canaryLag is how long the most overdue canary has waited for a slot.
func (s *schedule) canaryLag(now time.Time) time.Duration {
	q := s.canary.waiting
	if len(q) == 0 || !now.After(q[0].c.due) {
		return 0
	}
	return now.Sub(q[0].c.due)
}

// canaryQueue is a min-heap of targets by canary due time.
type canaryQueue []*target

func (q canaryQueue) Len() int           { return len(q) }
func (q canaryQueue) Less(i, j int) bool { return q[i].c.due.Before(q[j].c.due) }
func (q canaryQueue) Swap(i, j int) {
	q[i], q[j] = q[j], q[i]
	q[i].c.pos, q[j].c.pos = i, j
}
func (q *canaryQueue) Push(x any) {
	t := x.(*target)
	t.c.pos = len(*q)
	*q = append(*q, t)
}
func (q *canaryQueue) Pop() any {
	old := *q
	t := old[len(old)-1]
	old[len(old)-1] = nil
	*q = old[:len(old)-1]
	t.c.pos = -1
	return t
}
