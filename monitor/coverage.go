package monitor

import (
	"fmt"
	"math"
	"time"
)

// utilisation is the share of slot time the coverage arithmetic counts on:
// probes do not arrive perfectly evenly, so a config sized at 100% of its
// slots falls behind on every burst of slow answers.
const utilisation = 0.8

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
	// TTL is the verdict-ttl that keeps verdicts fresh between probes at
	// the configured interval: interval + timeout.
	TTL time.Duration
	cfg Config
}

// coverage is the sizing arithmetic: capacity = max-concurrency x
// probe-interval / latency x utilisation, against members.
func coverage(cfg Config, members int, measured time.Duration) Coverage {
	c := Coverage{Members: members, Measured: measured, cfg: cfg, TTL: cfg.ProbeInterval + cfg.ProbeTimeout}
	c.WorstCapacity = capacity(cfg, cfg.ProbeTimeout)
	c.WorstConcurrency = needConcurrency(members, cfg.ProbeInterval, cfg.ProbeTimeout)
	c.WorstInterval = needInterval(members, cfg.MaxConcurrency, cfg.ProbeTimeout)
	if measured > 0 {
		c.Capacity = capacity(cfg, measured)
		c.Concurrency = needConcurrency(members, cfg.ProbeInterval, measured)
		c.Interval = needInterval(members, cfg.MaxConcurrency, measured)
	}
	return c
}

func capacity(cfg Config, latency time.Duration) int {
	v := float64(cfg.MaxConcurrency) * utilisation * cfg.ProbeInterval.Seconds() / latency.Seconds()
	return int(math.Min(math.Floor(v), math.MaxInt32))
}

func needConcurrency(members int, interval, latency time.Duration) int {
	return int(math.Ceil(float64(members) * latency.Seconds() / (interval.Seconds() * utilisation)))
}

// needInterval is rounded up to 100ms, the shortest interval allowed.
func needInterval(members, concurrency int, latency time.Duration) time.Duration {
	s := float64(members) * latency.Seconds() / (float64(concurrency) * utilisation)
	d := time.Duration(math.Ceil(s*10)) * 100 * time.Millisecond
	return max(d, minProbeInterval)
}

// Covered reports whether the config covers the group at the measured
// latency, or in the worst case before anything was measured, and keeps
// verdicts fresh between probes.
func (c Coverage) Covered() bool {
	capacity := c.WorstCapacity
	if c.Measured > 0 {
		capacity = c.Capacity
	}
	return capacity >= c.Members && c.cfg.VerdictTTL >= c.TTL
}

// Advice says what to change, in app.toml terms, or that nothing needs to.
func (c Coverage) Advice() string {
	if c.cfg.VerdictTTL < c.TTL {
		return fmt.Sprintf("raise %s to at least %s (%s + %s), or verdicts go stale between probes",
			key("VerdictTTL"), c.TTL, name("ProbeInterval"), name("ProbeTimeout"))
	}
	worst := fmt.Sprintf("if every executor hung it would need %s", c.raise(c.WorstConcurrency, c.WorstInterval))
	switch {
	case c.Members <= c.WorstCapacity:
		return "covers the group even if every executor hangs"
	case c.Measured == 0:
		return "no latency measured yet; " + worst
	case c.Members <= c.Capacity:
		return "covers the group at the measured latency; " + worst
	default:
		return "does not cover the group at the measured latency: raise " + c.raise(c.Concurrency, c.Interval)
	}
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
