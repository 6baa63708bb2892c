// Package monitor is the validator's off-chain view of executor health: it
// probes every member of the current epoch group and keeps the latest
// verdict per executor, which ExtendVote reads. It runs beside consensus
// and never blocks it: Snapshot only copies under a read lock.
package monitor

import (
	"context"
	"fmt"
	"sync"
	"time"

	"cosmossdk.io/log"
	"github.com/cosmos/cosmos-sdk/telemetry"

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

type observation struct {
	set      bool
	ok       bool
	at       time.Time
	inFlight bool
}

// Monitor probes executors and answers snapshots of their health.
type Monitor struct {
	cfg    Config
	prober *prober
	source GroupSource
	logger log.Logger
	now    func() time.Time

	mu    sync.RWMutex
	group Group
	obs   []observation
	slots chan struct{}
	// next is where the next tick starts handing out slots, so that with
	// more executors than slots every executor gets its turn.
	next int

	cancel context.CancelFunc
	done   chan struct{}
	probes sync.WaitGroup
}

// New builds a monitor; Start runs it.
func New(cfg Config, source GroupSource, logger log.Logger) (*Monitor, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Monitor{
		cfg: cfg, prober: newProber(cfg), source: source, logger: logger, now: time.Now,
		slots: make(chan struct{}, cfg.MaxConcurrency),
	}, nil
}

// Start probes in the background until Stop.
func (m *Monitor) Start() {
	ctx, cancel := context.WithCancel(context.Background())
	m.cancel, m.done = cancel, make(chan struct{})
	go func() {
		defer close(m.done)
		ticker := time.NewTicker(m.cfg.ProbeInterval)
		defer ticker.Stop()
		for {
			m.tick(ctx)
			select {
			case <-ctx.Done():
				return
			case <-ticker.C:
			}
		}
	}()
}

// Stop ends probing: probes in flight are cancelled and waited for.
func (m *Monitor) Stop() {
	if m.cancel == nil {
		return
	}
	m.cancel()
	<-m.done
	m.probes.Wait()
	m.prober.client.CloseIdleConnections()
}

// tick refreshes the group and starts a probe for every executor that has
// none in flight, as long as a slot is free: a hanging executor holds one
// slot for at most the probe timeout and never delays the others.
func (m *Monitor) tick(ctx context.Context) {
	group, err := m.source(ctx)
	if err != nil {
		m.logger.Debug("health monitor: no epoch group", "err", err)
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if group.Epoch != m.group.Epoch || len(group.Members) != len(m.group.Members) {
		m.obs = make([]observation, len(group.Members))
		m.next = 0
	}
	m.group = group
	n := len(m.obs)
	for k := 0; k < n; k++ {
		i := (m.next + k) % n
		if m.obs[i].inFlight {
			continue
		}
		select {
		case m.slots <- struct{}{}:
		default:
			m.next = i // all slots busy: resume here on the next tick
			return
		}
		m.obs[i].inFlight = true
		m.probes.Add(1)
		go m.probeOne(ctx, group.Epoch, i, group.Members[i].URL)
	}
}

func (m *Monitor) probeOne(ctx context.Context, epoch uint64, i int, url string) {
	defer m.probes.Done()
	defer func() { <-m.slots }()
	pctx, cancel := context.WithTimeout(ctx, m.cfg.ProbeTimeout)
	ok, err := m.prober.probe(pctx, url)
	cancel()
	result := "ok"
	if !ok {
		result = "miss"
		m.logger.Debug("health monitor: probe missed", "executor", i, "err", err)
	}
	telemetry.IncrCounter(1, MetricKey("probes", result)...)
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.group.Epoch != epoch || i >= len(m.obs) {
		return // the group changed while probing: the result is for nobody
	}
	m.obs[i] = observation{set: true, ok: ok, at: m.now()}
}

// Snapshot returns the fresh verdicts for the group of epoch with n
// members, or an error if the monitor does not watch that group (the
// caller then abstains). It does no I/O.
func (m *Monitor) Snapshot(epoch uint64, n int) ([]verdict.Verdict, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if m.group.Epoch != epoch || len(m.obs) != n {
		return nil, fmt.Errorf("monitor watches epoch %d with %d executors, not epoch %d with %d",
			m.group.Epoch, len(m.obs), epoch, n)
	}
	now := m.now()
	out := make([]verdict.Verdict, n)
	for i, o := range m.obs {
		switch {
		case !o.set || now.Sub(o.at) > m.cfg.VerdictTTL:
			out[i] = verdict.Unknown
		case o.ok:
			out[i] = verdict.OK
		default:
			out[i] = verdict.Miss
		}
	}
	return out, nil
}
