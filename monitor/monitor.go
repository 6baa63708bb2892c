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

// latencyWindow is how many probes the moving average of probe latency
// (the coverage check's) spans: a plain mean up to that many, then each
// new probe weighs 1/latencyWindow.
const latencyWindow = 256

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
	// fdLimit is the open-file limit, read once at New.
	fdLimit int

	mu       sync.RWMutex
	watching bool // a group has been read
	epoch    uint64
	sched    schedule
	inFlight int
	latency  time.Duration // moving average over every probe, hung ones included
	probed   int           // probes in the average, up to latencyWindow
	// coverageAt is when the coverage line of the epoch is due: one
	// interval and timeout after the epoch was first seen, so that it
	// reports a measured latency; zero once logged.
	coverageAt time.Time

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
		cfg: cfg, prober: newProber(cfg), source: source, logger: logger, now: time.Now, fdLimit: fdLimit(),
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

// readGroup adopts the group the source shows. Once per epoch (the first
// included), after the first sweep, it logs whether the config covers the
// group.
func (m *Monitor) readGroup(ctx context.Context) {
	group, err := m.source(ctx)
	if err != nil {
		m.logger.Debug("health monitor: no epoch group", "err", err)
		return
	}
	m.mu.Lock()
	now := m.now()
	if !m.watching || group.Epoch != m.epoch {
		m.coverageAt = now.Add(m.cfg.ProbeInterval + m.cfg.ProbeTimeout)
	}
	changed := m.sched.adopt(group.Members, now)
	m.watching, m.epoch = true, group.Epoch
	measured := m.latency
	if m.probed > 0 {
		measured = max(measured, time.Microsecond) // zero means none measured
	}
	cov := CoverageOf(m.cfg, len(group.Members), measured, m.fdLimit)
	lag := m.sched.lag(now)
	inFlight := m.inFlight
	logNow := !m.coverageAt.IsZero() && !now.Before(m.coverageAt)
	if logNow {
		m.coverageAt = time.Time{}
	}
	m.mu.Unlock()
	if changed {
		m.poke()
	}
	if logNow {
		m.logCoverage(group.Epoch, cov)
	}
	reportSchedule(cov, inFlight, lag)
}

// coverageLine is the message of the coverage log line.
const coverageLine = "health monitor coverage"

func (m *Monitor) logCoverage(epoch uint64, c Coverage) {
	measured := "none yet"
	if c.Measured > 0 {
		measured = c.Measured.Round(time.Millisecond).String()
	}
	m.logger.Info(coverageLine, "epoch", epoch, "members", c.Members, "covered", c.Covered(),
		name("MaxConcurrency"), m.cfg.MaxConcurrency, name("ProbeInterval"), m.cfg.ProbeInterval.String(),
		"mean_latency", measured, "capacity_at_mean", c.Capacity,
		"capacity_if_all_hang", c.WorstCapacity, "fds_needed", c.FDs+nodeFDs, "fd_limit", c.FDLimit, "advice", c.Advice())
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
		m.probed = min(m.probed+1, latencyWindow)
		m.latency += (end.Sub(start) - m.latency) / time.Duration(m.probed)
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
	out, counts, err := m.snapshot(epoch, n)
	if err != nil {
		return nil, err
	}
	reportVerdicts(counts)
	return out, nil
}

func (m *Monitor) snapshot(epoch uint64, n int) ([]verdict.Verdict, verdictCounts, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	var counts verdictCounts
	if !m.watching || m.epoch != epoch || len(m.sched.targets) != n {
		return nil, counts, fmt.Errorf("monitor watches epoch %d with %d executors, not epoch %d with %d",
			m.epoch, len(m.sched.targets), epoch, n)
	}
	now := m.now()
	out := make([]verdict.Verdict, n)
	for i, t := range m.sched.targets {
		if !t.set {
			out[i] = verdict.Unknown
			counts.unknown++
			counts.oldest = max(counts.oldest, now.Sub(t.since))
			continue
		}
		age := now.Sub(t.at)
		counts.oldest = max(counts.oldest, age)
		switch {
		case age > m.cfg.VerdictTTL:
			out[i] = verdict.Unknown
			counts.stale++
		case t.ok:
			out[i] = verdict.OK
			counts.ok++
		default:
			out[i] = verdict.Miss
			counts.miss++
		}
	}
	return out, counts, nil
}
