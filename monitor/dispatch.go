package monitor

import (
	"context"
	"time"
)

// lane is one kind of request with slots of its own.
type lane struct {
	slots chan struct{}
	// wake tells the lane's dispatcher to look at the schedule again: the
	// group changed, or a request ended whose executor is now the first due.
	wake chan struct{}
	// take, called under the lock, marks the first executor due in flight
	// and returns its request, or how long until one is due (0: none).
	take func(ctx context.Context, now time.Time) (func(), time.Duration)
	// idle bounds a wait when nothing is due.
	idle time.Duration
}

func newLane(slots int, idle time.Duration, take func(context.Context, time.Time) (func(), time.Duration)) lane {
	return lane{slots: make(chan struct{}, slots), wake: make(chan struct{}, 1), take: take, idle: idle}
}

func (l *lane) poke() {
	select {
	case l.wake <- struct{}{}:
	default:
	}
}

// dispatch starts a lane's requests: it takes a slot, waits until an
// executor is due, and starts its request, for as long as the monitor
// runs.
func (m *Monitor) dispatch(ctx context.Context, l *lane) {
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		select {
		case l.slots <- struct{}{}:
		case <-ctx.Done():
			return
		}
		run := m.nextDue(ctx, l, timer)
		if run == nil {
			<-l.slots
			return
		}
		m.work.Add(1)
		go func() {
			defer m.work.Done()
			defer func() { <-l.slots }()
			run()
		}()
	}
}

// nextDue waits for the first executor due in the lane and returns its
// request, marked in flight; nil when the monitor stops.
func (m *Monitor) nextDue(ctx context.Context, l *lane, timer *time.Timer) func() {
	for {
		m.mu.Lock()
		run, wait := l.take(ctx, m.now())
		m.mu.Unlock()
		if run != nil {
			return run
		}
		if wait <= 0 || wait > l.idle {
			wait = l.idle // nothing waiting: all in flight, or no group yet
		}
		timer.Reset(wait)
		select {
		case <-timer.C:
		case <-l.wake:
		case <-ctx.Done():
			return nil
		}
	}
}

func (m *Monitor) takeProbe(ctx context.Context, now time.Time) (func(), time.Duration) {
	t, wait := m.sched.take(now)
	if t == nil {
		return nil, wait
	}
	m.inFlight++
	return func() { m.probeOne(ctx, t, now) }, 0
}

func (m *Monitor) probeOne(ctx context.Context, t *target, start time.Time) {
	pctx, cancel := context.WithTimeout(ctx, m.cfg.ProbeTimeout)
	ok, err := m.prober.probe(pctx, t.member.URL)
	cancel()
	end := m.now()
	cancelled := ctx.Err() != nil
	if !ok && !cancelled {
		m.logger.Debug("health monitor: probe missed", "executor", t.member.Address, "err", err)
	}
	if !cancelled {
		reportProbe(ok, start)
	}
	m.mu.Lock()
	m.inFlight--
	if !cancelled {
		m.latency.add(end.Sub(start))
	}
	first := m.sched.finish(t, start, end, ok, cancelled)
	m.mu.Unlock()
	if first {
		m.probeLane.poke()
	}
}

func (m *Monitor) takeCanary(ctx context.Context, now time.Time) (func(), time.Duration) {
	t, model, wait := m.sched.takeCanary(now)
	if t == nil {
		return nil, wait
	}
	m.canaryInFlight++
	cctx, cancel := context.WithCancel(ctx)
	t.c.cancel = cancel // the executor leaving the group cancels it
	return func() { m.canaryOne(cctx, cancel, t, model, now) }, 0
}

// canaryOne sends one canary; cancelled (Stop, or the executor left the
// group) it is no outcome.
func (m *Monitor) canaryOne(ctx context.Context, cancel context.CancelFunc, t *target, model string, start time.Time) {
	defer cancel()
	reportCanarySent()
	cctx, stop := context.WithTimeout(ctx, m.cfg.CanaryTimeout)
	ok, err := m.canary.send(cctx, t.member.URL, model)
	stop()
	end := m.now()
	cancelled := ctx.Err() != nil
	if !ok && !cancelled {
		m.logger.Debug("health monitor: canary missed", "executor", t.member.Address, "err", err)
	}
	if !cancelled {
		reportCanary(ok, start)
	}
	m.mu.Lock()
	m.canaryInFlight--
	if !cancelled {
		m.canaryLatency.add(end.Sub(start))
	}
	first := m.sched.finishCanary(t, start, end, ok, cancelled)
	m.mu.Unlock()
	if first {
		m.canaryLane.poke()
	}
}
