// Package monitor is the validator's off-chain view of executor health: it
// probes every member of the current epoch group and keeps the latest
// verdict per executor, which ExtendVote reads. It runs beside consensus
// and never blocks it: Snapshot only copies under a read lock.
package monitor

import (
	"context"
	"math/rand/v2"
	"sync"
	"time"

	"cosmossdk.io/log/v2"
)

// Member is one executor to probe, at its index in the epoch group.
type Member struct {
	Address string
	URL     string
	// Model is the first model it serves: what its canaries ask for.
	// Empty: no canaries, its service report is unknown.
	Model string
	// Suspect: the chain holds something against it (a breaker record);
	// its canaries come at the suspect rate for a while (canaryPlan).
	Suspect bool
}

// Group is the epoch group as committed state shows it.
type Group struct {
	Epoch   uint64
	Members []Member
}

// GroupSource reads the current epoch group from the last committed state.
type GroupSource func(ctx context.Context) (Group, error)

// latencyWindow is how many requests the moving averages of latency (the
// coverage check's) span: a plain mean up to that many, then each new one
// weighs 1/latencyWindow.
const latencyWindow = 256

// average is a moving average of latencies over latencyWindow.
type average struct {
	mean time.Duration
	n    int
}

func (a *average) add(d time.Duration) {
	a.n = min(a.n+1, latencyWindow)
	a.mean += (d - a.mean) / time.Duration(a.n)
}

// measured is the mean, or 0 when nothing was measured (a measured mean
// is never 0).
func (a average) measured() time.Duration {
	if a.n == 0 {
		return 0
	}
	return max(a.mean, time.Microsecond)
}

// Monitor probes executors, sends them canaries, and answers snapshots of
// their health and reports of their service.
//
// While it is started, refresh reads the group once per probe interval,
// and one dispatcher per lane (probes; canaries, if enabled) starts a
// request whenever a slot of its lane is free and an executor is due for
// it (schedule.go, canary_schedule.go). Each request runs in its own
// goroutine and frees its slot the moment it ends; the lanes' slots are
// apart, so hung canaries never delay probes, nor hung probes canaries.
type Monitor struct {
	cfg    Config
	prober *prober
	canary *canarySender
	source GroupSource
	logger log.Logger
	now    func() time.Time
	// fdLimit is the open-file limit, read once at New.
	fdLimit int

	mu             sync.RWMutex
	watching       bool // a group has been read
	epoch          uint64
	sched          schedule
	inFlight       int // probes
	canaryInFlight int
	latency        average // of every probe, hung ones included
	canaryLatency  average // of every canary, hung ones included
	// coverageAt is when the coverage line of the epoch is due: one
	// interval and timeout after the epoch was first seen, so that it
	// reports a measured latency; zero once logged.
	coverageAt time.Time

	probeLane, canaryLane lane

	cancel context.CancelFunc
	done   sync.WaitGroup // refresh and the dispatchers
	work   sync.WaitGroup // probes and canaries
}

// New builds a monitor; Start runs it.
func New(cfg Config, source GroupSource, logger log.Logger) (*Monitor, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	rule, err := cfg.cusumRule()
	if err != nil {
		return nil, err
	}
	m := &Monitor{
		cfg: cfg, prober: newProber(cfg), canary: newCanarySender(cfg), source: source, logger: logger, now: time.Now,
		fdLimit: fdLimit(),
		sched: schedule{interval: cfg.ProbeInterval, salt: rand.Uint64(),
			canary: newCanaryPlan(cfg, rule, rand.Uint64(), jitter)},
	}
	m.probeLane = newLane(cfg.MaxConcurrency, cfg.ProbeInterval, m.takeProbe)
	m.canaryLane = newLane(cfg.CanaryMaxConcurrency, cfg.CanarySuspectInterval, m.takeCanary)
	return m, nil
}

// jitter draws a gap within +-25% of mean.
func jitter(mean time.Duration) time.Duration {
	return mean*3/4 + rand.N(mean/2+1)
}

// Start probes and sends canaries in the background until Stop.
func (m *Monitor) Start() {
	ctx, cancel := context.WithCancel(context.Background())
	m.cancel = cancel
	lanes := []*lane{&m.probeLane}
	if m.cfg.CanaryEnabled {
		lanes = append(lanes, &m.canaryLane)
	}
	m.done.Add(1 + len(lanes))
	go func() {
		defer m.done.Done()
		m.refresh(ctx)
	}()
	for _, l := range lanes {
		go func() {
			defer m.done.Done()
			m.dispatch(ctx, l)
		}()
	}
}

// Stop ends probing: probes and canaries in flight are cancelled and
// waited for.
func (m *Monitor) Stop() {
	if m.cancel == nil {
		return
	}
	m.cancel()
	m.done.Wait()
	m.work.Wait()
	m.prober.client.CloseIdleConnections()
	m.canary.client.CloseIdleConnections()
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
	cov := CoverageOf(m.cfg, len(group.Members), m.latency.measured(), m.fdLimit)
	ccov := CanaryCoverageOf(m.cfg, m.canaried(), m.canaryLatency.measured())
	gauges := scheduleGauges{inFlight: m.inFlight, lag: m.sched.lag(now), canaryInFlight: m.canaryInFlight,
		canaryLag: m.sched.canaryLag(now), suspects: m.suspects()}
	logNow := !m.coverageAt.IsZero() && !now.Before(m.coverageAt)
	if logNow {
		m.coverageAt = time.Time{}
	}
	m.mu.Unlock()
	if changed {
		m.probeLane.poke()
		m.canaryLane.poke()
	}
	if logNow {
		m.logCoverage(group.Epoch, cov, ccov)
	}
	reportSchedule(cov, ccov, gauges)
}

// canaried is how many members get canaries (those with a model). Under
// the lock.
func (m *Monitor) canaried() int {
	n := 0
	for _, t := range m.sched.targets {
		if t.c.model != "" {
			n++
		}
	}
	return n
}

// suspects is how many members are suspect. Under the lock.
func (m *Monitor) suspects() int {
	n := 0
	for _, t := range m.sched.targets {
		if t.c.suspect() {
			n++
		}
	}
	return n
}

// coverageLine is the message of the coverage log line.
const coverageLine = "health monitor coverage"

func (m *Monitor) logCoverage(epoch uint64, c Coverage, cc CanaryCoverage) {
	measured := func(d time.Duration) string {
		if d == 0 {
			return "none yet"
		}
		return d.Round(time.Millisecond).String()
	}
	kv := []any{"epoch", epoch, "members", c.Members, "covered", c.Covered(),
		name("MaxConcurrency"), m.cfg.MaxConcurrency, name("ProbeInterval"), m.cfg.ProbeInterval.String(),
		"mean_latency", measured(c.Measured), "capacity_at_mean", c.Capacity,
		"capacity_if_all_hang", c.WorstCapacity, "fds_needed", c.FDs + nodeFDs, "fd_limit", c.FDLimit, "advice", c.Advice()}
	if m.cfg.CanaryEnabled {
		kv = append(kv, "canaried", cc.Members, "canaries_covered", cc.Covered(),
			name("CanaryMaxConcurrency"), m.cfg.CanaryMaxConcurrency, name("CanaryInterval"), m.cfg.CanaryInterval.String(),
			"canary_mean_latency", measured(cc.Measured), "canary_capacity_at_mean", cc.Capacity,
			"canary_capacity_if_all_hang", cc.WorstCapacity, "canary_advice", cc.Advice())
	}
	m.logger.Info(coverageLine, kv...)
}
