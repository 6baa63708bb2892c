package monitor

import (
	"fmt"
	"math"
	"math/big"
	"time"
)

// utilisation is the share of slot time the coverage arithmetic counts
// on, utilNum/utilDen (80%): probes do not arrive perfectly evenly, so a
// config sized at 100% of its slots falls behind on every burst of slow
// answers.
const utilNum, utilDen = 4, 5

// Coverage says whether a configuration can probe every member of a group
// once per probe interval, at the measured latency and in the worst case
// (every probe running to the timeout, as when every executor hangs), and
// what would be needed otherwise.
type Coverage struct {
	Members int
	// Measured is the mean probe latency so far; 0 before any probe ended.
	Measured time.Duration
	// Capacity is how many executors the config covers at the measured
	// latency (0 when unmeasured); WorstCapacity at the probe timeout.
	Capacity, WorstCapacity int
	// Concurrency and Interval are the max-concurrency (at this interval)
	// or the probe-interval (at this concurrency) that would cover the
	// group at the measured latency; the Worst ones at the timeout.
	Concurrency, WorstConcurrency int
	Interval, WorstInterval       time.Duration
	// Sweep is how often each executor is probed at the measured latency
	// (0 when unmeasured): the interval, or longer when the slots fall
	// short (members x latency / max-concurrency); WorstSweep at the
	// timeout. Verdicts stay fresh while sweep + timeout <= verdict-ttl.
	Sweep, WorstSweep time.Duration
	// TTL is the verdict-ttl that keeps verdicts fresh between probes at
	// the configured interval: interval + timeout.
	TTL time.Duration
	// FDs is how many file descriptors the monitor may hold: one kept-alive
	// connection per executor (up to the pool's bound) and one per probe in
	// flight, and with canaries one per canary in flight and the canary
	// connections kept through bursts (canaryFDs); FDLimit is the
	// process's limit (0 if unknown), which must also leave the node its
	// own (nodeFDs).
	FDs, FDLimit int
	cfg          Config
}

// CoverageOf is the sizing arithmetic the monitor logs once per epoch:
// capacity = max-concurrency x probe-interval / latency x 80%, against
// members, at a measured mean latency (0: unknown) and at the timeout, and
// the file descriptors against an open-file limit (0: unknown). It is
// exported for sizing a deployment or a test network.
func CoverageOf(cfg Config, members int, measured time.Duration, fdLimit int) Coverage {
	c := Coverage{Members: members, Measured: measured, cfg: cfg, TTL: cfg.ProbeInterval + cfg.ProbeTimeout,
		FDs: min(members, maxIdleConns) + min(members, cfg.MaxConcurrency) + canaryFDs(cfg, members), FDLimit: fdLimit}
	c.WorstCapacity = capacity(cfg, cfg.ProbeTimeout)
	c.WorstConcurrency = needConcurrency(members, cfg.ProbeInterval, cfg.ProbeTimeout)
	c.WorstInterval = needInterval(members, cfg.MaxConcurrency, cfg.ProbeTimeout)
	c.WorstSweep = sweep(cfg, members, cfg.ProbeTimeout)
	if measured > 0 {
		c.Sweep = sweep(cfg, members, measured)
		c.Capacity = capacity(cfg, measured)
		c.Concurrency = needConcurrency(members, cfg.ProbeInterval, measured)
		c.Interval = needInterval(members, cfg.MaxConcurrency, measured)
	}
	return c
}

func capacity(cfg Config, latency time.Duration) int {
	return capacityOf(cfg.MaxConcurrency, cfg.ProbeInterval, latency)
}

func capacityOf(concurrency int, interval, latency time.Duration) int {
	v := mulDiv(int64(concurrency)*utilNum, int64(interval), int64(latency)*utilDen, false)
	return int(min(v, math.MaxInt32))
}

// canaryFDs is what canaries may hold open: one connection per canary in
// flight, and the idle ones kept after a canary for canaryIdle, about
// members x canaryIdle / canary-interval (0 with canaries off).
func canaryFDs(cfg Config, members int) int {
	if !cfg.CanaryEnabled {
		return 0
	}
	idle := mulDiv(int64(members), int64(canaryIdle(cfg)), int64(cfg.CanaryInterval), true)
	return min(members, cfg.CanaryMaxConcurrency) + int(min(idle, int64(members)))
}

func needConcurrency(members int, interval, latency time.Duration) int {
	v := mulDiv(int64(members)*utilDen, int64(latency), int64(interval)*utilNum, true)
	return int(min(v, math.MaxInt32))
}

// sweep is rounded up to the millisecond.
func sweep(cfg Config, members int, latency time.Duration) time.Duration {
	ns := mulDiv(int64(members), int64(latency), int64(cfg.MaxConcurrency), true)
	return max(time.Duration(min(ns, math.MaxInt64-int64(time.Millisecond))).Round(time.Millisecond), cfg.ProbeInterval)
}

// needInterval is rounded up to 100ms, the granularity of the advice.
func needInterval(members, concurrency int, latency time.Duration) time.Duration {
	ns := mulDiv(int64(members)*utilDen, int64(latency), int64(concurrency)*utilNum, true)
	const step = int64(100 * time.Millisecond)
	return max(time.Duration((min(ns, math.MaxInt64-step)+step-1)/step*step), minProbeInterval)
}

// mulDiv is a*b/c rounded down or up, exact (no overflow of a*b), at most
// MaxInt64. a, b >= 0 and c > 0.
func mulDiv(a, b, c int64, up bool) int64 {
	p := new(big.Int).Mul(big.NewInt(a), big.NewInt(b))
	q, r := new(big.Int).QuoRem(p, big.NewInt(c), new(big.Int))
	if up && r.Sign() != 0 {
		q.Add(q, big.NewInt(1))
	}
	if !q.IsInt64() {
		return math.MaxInt64
	}
	return q.Int64()
}

// nodeFDs is what the coverage check leaves the rest of the node (peers,
// RPC clients, the database's files).
const nodeFDs = 1024

// FDsShort reports whether the open-file limit is known and too low for
// the monitor and the node: probes that cannot open a socket are misses.
func (c Coverage) FDsShort() bool { return c.FDLimit > 0 && c.FDs+nodeFDs > c.FDLimit }

// Covered reports whether the config covers the group at the measured
// latency, or in the worst case before anything was measured, and keeps
// verdicts fresh between probes.
func (c Coverage) Covered() bool {
	capacity := c.WorstCapacity
	if c.Measured > 0 {
		capacity = c.Capacity
	}
	return capacity >= c.Members && c.cfg.VerdictTTL >= c.TTL && !c.FDsShort()
}

// Advice says what to change, in app.toml terms, or that nothing needs to.
func (c Coverage) Advice() string {
	if c.FDsShort() {
		return fmt.Sprintf("raise the open-file limit (ulimit -n, now %d) to at least %d: the monitor may hold %d "+
			"connections and the node needs its own; a probe that cannot open one is a miss", c.FDLimit, c.FDs+nodeFDs, c.FDs)
	}
	if c.cfg.VerdictTTL < c.TTL {
		return fmt.Sprintf("raise %s to at least %s (%s + %s), or verdicts go stale between probes",
			key("VerdictTTL"), c.TTL, name("ProbeInterval"), name("ProbeTimeout"))
	}
	worst := fmt.Sprintf("if every executor hung, each would be probed every %s (%s); for once per interval raise %s",
		c.WorstSweep, c.freshness(c.WorstSweep), c.raise(c.WorstConcurrency, c.WorstInterval))
	switch {
	case c.Members <= c.WorstCapacity:
		return "covers the group even if every executor hangs"
	case c.Measured == 0:
		return "no latency measured yet; " + worst
	case c.Members <= c.Capacity:
		return "covers the group at the measured latency; " + worst
	default:
		return fmt.Sprintf("does not cover the group at the measured latency: each executor is probed every %s (%s); raise %s",
			c.Sweep, c.freshness(c.Sweep), c.raise(c.Concurrency, c.Interval))
	}
}

// freshness says whether verdicts outlive a sweep.
func (c Coverage) freshness(sweep time.Duration) string {
	if sweep+c.cfg.ProbeTimeout <= c.cfg.VerdictTTL {
		return "verdicts fresh within " + name("VerdictTTL")
	}
	return "some verdicts may go stale"
}

// raise names the two ways out: more slots or a longer interval (with the
// TTL that interval needs).
func (c Coverage) raise(concurrency int, interval time.Duration) string {
	ttl := ""
	if need := interval + c.cfg.ProbeTimeout; need > c.cfg.VerdictTTL {
		ttl = fmt.Sprintf(" with %s at least %s", name("VerdictTTL"), need)
	}
	if concurrency > maxConcurrency {
		return fmt.Sprintf("%s to %s%s (%s above %d is refused)", name("ProbeInterval"), interval, ttl,
			name("MaxConcurrency"), maxConcurrency)
	}
	return fmt.Sprintf("%s to %d or %s to %s%s", name("MaxConcurrency"), concurrency, name("ProbeInterval"), interval, ttl)
}
