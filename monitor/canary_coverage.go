package monitor

import (
	"fmt"
	"time"
)

// CanaryCoverage says whether the canary config can send every canaried
// member (a member with a model) one canary per canary-interval:
//
//	canary-max-concurrency x canary-interval / mean canary latency x 80% >= members
//
// at the measured mean latency and if every canary ran to the timeout,
// and what would be needed otherwise. Suspect executors ask more of the
// slots: canary-interval / canary-suspect-interval times the background
// share while a chain burst lasts or their CUSUM is above 0, which the
// 80% headroom covers only while few are.
type CanaryCoverage struct {
	Members int
	// Measured is the mean canary latency so far; 0 before any ended.
	Measured time.Duration
	// Capacity is how many executors the config covers at the measured
	// latency (0 when unmeasured); WorstCapacity at the canary timeout.
	Capacity, WorstCapacity int
	// Concurrency and Interval are the canary-max-concurrency (at this
	// interval) or the canary-interval (at this concurrency) that would
	// cover the members at the measured latency; the Worst ones at the
	// timeout.
	Concurrency, WorstConcurrency int
	Interval, WorstInterval       time.Duration
	cfg                           Config
}

// CanaryCoverageOf is the canary sizing arithmetic the monitor logs once
// per epoch, beside CoverageOf's, for members canaried at a measured mean
// latency (0: unknown).
func CanaryCoverageOf(cfg Config, members int, measured time.Duration) CanaryCoverage {
	c := CanaryCoverage{Members: members, Measured: measured, cfg: cfg}
	c.WorstCapacity = capacityOf(cfg.CanaryMaxConcurrency, cfg.CanaryInterval, cfg.CanaryTimeout)
	c.WorstConcurrency = needConcurrency(members, cfg.CanaryInterval, cfg.CanaryTimeout)
	c.WorstInterval = needInterval(members, cfg.CanaryMaxConcurrency, cfg.CanaryTimeout)
	if measured > 0 {
		c.Capacity = capacityOf(cfg.CanaryMaxConcurrency, cfg.CanaryInterval, measured)
		c.Concurrency = needConcurrency(members, cfg.CanaryInterval, measured)
		c.Interval = needInterval(members, cfg.CanaryMaxConcurrency, measured)
	}
	return c
}

// Covered reports whether the config covers the canaried members at the
// measured latency, or in the worst case before anything was measured
// (true with canaries off: there is nothing to cover).
func (c CanaryCoverage) Covered() bool {
	if !c.cfg.CanaryEnabled {
		return true
	}
	capacity := c.WorstCapacity
	if c.Measured > 0 {
		capacity = c.Capacity
	}
	return capacity >= c.Members
}

// Advice says what to change, in app.toml terms, or that nothing needs to.
func (c CanaryCoverage) Advice() string {
	worst := "if every canary hung, raise " + c.raise(c.WorstConcurrency, c.WorstInterval)
	switch {
	case !c.cfg.CanaryEnabled:
		return "canaries are off: every service report is unknown"
	case c.Members <= c.WorstCapacity:
		return "covers the canaried members even if every canary hangs"
	case c.Measured == 0:
		return "no canary latency measured yet; " + worst
	case c.Members <= c.Capacity:
		return "covers the canaried members at the measured latency; " + worst
	default:
		return "does not cover the canaried members at the measured latency (canaries come less often " +
			"than once per interval); raise " + c.raise(c.Concurrency, c.Interval)
	}
}

// raise names the two ways out: more slots or a longer interval (with the
// TTL that interval needs).
func (c CanaryCoverage) raise(concurrency int, interval time.Duration) string {
	ttl := ""
	if need := time.Duration(c.cfg.CanaryMinSamples)*interval + c.cfg.CanaryTimeout; need > c.cfg.CanaryTTL {
		ttl = fmt.Sprintf(" with %s at least %s", name("CanaryTTL"), need)
	}
	if concurrency > maxConcurrency {
		return fmt.Sprintf("%s to %s%s (%s above %d is refused)", name("CanaryInterval"), interval, ttl,
			name("CanaryMaxConcurrency"), maxConcurrency)
	}
	return fmt.Sprintf("%s to %d or %s to %s%s", name("CanaryMaxConcurrency"), concurrency, name("CanaryInterval"), interval, ttl)
}
