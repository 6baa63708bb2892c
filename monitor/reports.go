package monitor

import (
	"fmt"

	"github.com/inferenced/inferenced/x/inference/service"
	"github.com/inferenced/inferenced/x/inference/verdict"
)

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
	if err := m.watches(epoch, n); err != nil {
		return nil, counts, err
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

// Service returns one report per member of the group of epoch (n members),
// in group order: the failed share of the executor's recent canaries, or
// service.Unknown. Same refusals as Snapshot (another epoch or size:
// error). No I/O, read lock only; it also sets the report gauges.
//
// A report counts the outcomes in the executor's ring (its last
// canary-window canaries) that ended within canary-ttl, and is
// service.Rate(misses, count) when count is at least canary-min-samples;
// an executor without a model, or with canaries off, is Unknown.
func (m *Monitor) Service(epoch uint64, n int) ([]service.Report, error) {
	out, known, err := m.service(epoch, n)
	if err != nil {
		return nil, err
	}
	reportService(known, n-known)
	return out, nil
}

func (m *Monitor) service(epoch uint64, n int) ([]service.Report, int, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if err := m.watches(epoch, n); err != nil {
		return nil, 0, err
	}
	now := m.now()
	out := make([]service.Report, n)
	known := 0
	for i, t := range m.sched.targets {
		out[i] = t.c.report(now, m.cfg.CanaryTTL, m.cfg.CanaryMinSamples)
		if out[i].Known() {
			known++
		}
	}
	return out, known, nil
}

// watches refuses any group but the watched one. Under the lock.
func (m *Monitor) watches(epoch uint64, n int) error {
	if !m.watching || m.epoch != epoch || len(m.sched.targets) != n {
		return fmt.Errorf("monitor watches epoch %d with %d executors, not epoch %d with %d",
			m.epoch, len(m.sched.targets), epoch, n)
	}
	return nil
}
