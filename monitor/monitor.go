// Package monitor is the validator's off-chain view of executor health: it
// probes every member of the current epoch group and keeps the latest
// verdict per executor, which ExtendVote reads. It runs beside consensus
// and never blocks it: Snapshot only copies under a read lock.
package monitor

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"cosmossdk.io/log"

	"github.com/inferenced/inferenced/x/inference/verdict"
)

// Member is one executor to probe, at its index in the epoch group.
type Member struct {
	Address string
	URL     string
}

// Group is the epoch group as committed state shows it.
type Group struct {
	Epoch   uint64
	Members []Member
}

// GroupSource reads the current epoch group from the last committed state.
type GroupSource func(ctx context.Context) (Group, error)

// latencyWeight is the weight of one probe in the moving average of probe
// latency the coverage check uses.
const latencyWeight = 1.0 / 32

// Monitor probes executors and answers snapshots of their health.
//
// Two goroutines run while it is started: refresh reads the group once per
// probe interval, dispatch starts a probe whenever a slot is free and an
// executor is due (schedule.go). Each probe runs in its own goroutine and
// frees its slot the moment it ends.
type Monitor struct {
	cfg    Config
	prober *prober
	source GroupSource
	logger log.Logger
	now    func() time.Time

	mu       sync.RWMutex
	watching bool // a group has been read
	epoch    uint64
	sched    schedule
	inFlight int
	latency  time.Duration // moving average over every probe, hung ones included

	slots chan struct{}
	// wake tells dispatch to look at the schedule again: the group changed,
	// or a probe ended whose executor is now the first due.
	wake chan struct{}

	cancel context.CancelFunc
	done   sync.WaitGroup // refresh and dispatch
	probes sync.WaitGroup
}

// New builds a monitor; Start runs it.
func New(cfg Config, source GroupSource, logger log.Logger) (*Monitor, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Monitor{
		cfg: cfg, prober: newProber(cfg), source: source, logger: logger, now: time.Now,
		sched: schedule{interval: cfg.ProbeInterval, salt: rand.Uint64()},
		slots: make(chan struct{}, cfg.MaxConcurrency), wake: make(chan struct{}, 1),
	}, nil
}

// Start probes in the background until Stop.
func (m *Monitor) Start() {
	ctx, cancel := context.WithCancel(context.Background())
	m.cancel = cancel
	m.done.Add(2)
	go func() {
		defer m.done.Done()
		m.refresh(ctx)
	}()
	go func() {
		defer m.done.Done()
		m.dispatch(ctx)
	}()
}

// Stop ends probing: probes in flight are cancelled and waited for.
func (m *Monitor) Stop() {
	if m.cancel == nil {
		return
	}
	m.cancel()
	m.done.Wait()
	m.probes.Wait()
	m.prober.client.CloseIdleConnections()
}

// refresh reads the group now and then once per interval, never per probe.
func (m *Monitor) refresh(ctx context.Context) {
	ticker := time.NewTicker(m.cfg.ProbeInterval)
	defer ticker.Stop()
	for {
		m.readGroup(ctx)
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		}
	}
}

// readGroup adopts the group the source shows. On the first read and on
// every epoch change it logs whether the config covers the group.
func (m *Monitor) readGroup(ctx context.Context) {
	group, err := m.source(ctx)
	if err != nil {
		m.logger.Debug("health monitor: no epoch group", "err", err)
		return
	}
	m.mu.Lock()
	newEpoch := !m.watching || group.Epoch != m.epoch
	changed := m.sched.adopt(group.Members, m.now())
	m.watching, m.epoch = true, group.Epoch
	cov := coverage(m.cfg, len(group.Members), m.latency)
	lag := m.sched.lag(m.now())
	inFlight := m.inFlight
	m.mu.Unlock()
	if changed {
		m.poke()
	}
	if newEpoch {
		m.logCoverage(group.Epoch, cov)
	}
	reportSchedule(cov, inFlight, lag)
}

func (m *Monitor) logCoverage(epoch uint64, c Coverage) {
	measured := "none yet"
	if c.Measured > 0 {
		measured = c.Measured.Round(time.Millisecond).String()
	}
	m.logger.Info("health monitor coverage", "epoch", epoch, "members", c.Members, "covered", c.Covered(),
		name("MaxConcurrency"), m.cfg.MaxConcurrency, name("ProbeInterval"), m.cfg.ProbeInterval,
		"mean_latency", measured, "capacity_at_mean", c.Capacity,
		"capacity_if_all_hang", c.WorstCapacity, "advice", c.Advice())
}

func (m *Monitor) poke() {
	select {
	case m.wake <- struct{}{}:
	default:
	}
}

// dispatch starts probes: it takes a slot, waits until an executor is
// due, and starts its probe, for as long as the monitor runs.
func (m *Monitor) dispatch(ctx context.Context) {
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		select {
		case m.slots <- struct{}{}:
		case <-ctx.Done():
			return
		}
		t, start := m.nextDue(ctx, timer)
		if t == nil {
			<-m.slots
			return
		}
		m.probes.Add(1)
		go m.probeOne(ctx, t, start)
	}
}

// nextDue waits for the first executor due and marks it in flight; nil
// when the monitor stops.
func (m *Monitor) nextDue(ctx context.Context, timer *time.Timer) (*target, time.Time) {
	for {
		m.mu.Lock()
		now := m.now()
		t, wait := m.sched.take(now)
		if t != nil {
			m.inFlight++
		}
		m.mu.Unlock()
		if t != nil {
			return t, now
		}
		if wait <= 0 || wait > m.cfg.ProbeInterval {
			wait = m.cfg.ProbeInterval // nothing waiting: all in flight, or no group yet
		}
		timer.Reset(wait)
		select {
		case <-timer.C:
		case <-m.wake:
		case <-ctx.Done():
			return nil, time.Time{}
		}
	}
}

func (m *Monitor) probeOne(ctx context.Context, t *target, start time.Time) {
	defer m.probes.Done()
	defer func() { <-m.slots }()
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
		took := end.Sub(start)
		if m.latency == 0 {
			m.latency = took
		} else {
			m.latency += time.Duration(float64(took-m.latency) * latencyWeight)
		}
	}
	first := m.sched.finish(t, start, end, ok, cancelled)
	m.mu.Unlock()
	if first {
		m.poke()
	}
}

// Snapshot returns the fresh verdicts for the group of epoch with n
// members, or an error if the monitor does not watch that group (the
// caller then abstains). It does no I/O: one pass under the read lock,
// which also sets the verdict gauges.
func (m *Monitor) Snapshot(epoch uint64, n int) ([]verdict.Verdict, error) {
	m.mu.RLock()
	if !m.watching || m.epoch != epoch || len(m.sched.targets) != n {
		defer m.mu.RUnlock()
		return nil, fmt.Errorf("monitor watches epoch %d with %d executors, not epoch %d with %d",
			m.epoch, len(m.sched.targets), epoch, n)
	}
	now := m.now()
	out := make([]verdict.Verdict, n)
	var counts verdictCounts
	for i, t := range m.sched.targets {
		age := now.Sub(t.since)
		switch {
		case !t.set:
			out[i] = verdict.Unknown
			counts.unknown++
		case now.Sub(t.at) > m.cfg.VerdictTTL:
			out[i] = verdict.Unknown
			counts.stale++
			age = now.Sub(t.at)
		case t.ok:
			out[i] = verdict.OK
			counts.ok++
			age = now.Sub(t.at)
		default:
			out[i] = verdict.Miss
			counts.miss++
			age = now.Sub(t.at)
		}
		counts.oldest = max(counts.oldest, age)
	}
	m.mu.RUnlock()
	reportVerdicts(counts)
	return out, nil
}
