package monitor

import (
	"os"
	"strings"
	"testing"
	"time"
)

func TestCoverage(t *testing.T) {
	def := DefaultConfig() // 512 slots, 1s interval, 800ms timeout, 5s TTL
	shortTTL := def
	shortTTL.ProbeInterval, shortTTL.ProbeTimeout, shortTTL.VerdictTTL = 2*time.Second, time.Second, 2*time.Second
	cases := []struct {
		name     string
		cfg      Config
		members  int
		measured time.Duration
		fdLimit  int
		want     Coverage // cfg and TTL filled in below
		covered  bool
		advice   string
	}{
		{"100 executors, nothing measured yet", def, 100, 0, 20000,
			Coverage{WorstCapacity: 512, WorstConcurrency: 100, WorstInterval: 200 * time.Millisecond, WorstSweep: time.Second}, true,
			"covers the group even if every executor hangs"},
		{"1,000 executors, nothing measured yet", def, 1000, 0, 20000,
			Coverage{WorstCapacity: 512, WorstConcurrency: 1000, WorstInterval: 2 * time.Second, WorstSweep: 1563 * time.Millisecond}, false,
			"no latency measured yet; if every executor hung, each would be probed every 1.563s (verdicts fresh within verdict-ttl); for once per interval raise max-concurrency to 1000 or probe-interval to 2s"},
		{"1,000 executors, 30% hanging (mean 240ms)", def, 1000, 240 * time.Millisecond, 0,
			Coverage{Capacity: 1706, WorstCapacity: 512, Concurrency: 300, WorstConcurrency: 1000,
				Interval: 600 * time.Millisecond, WorstInterval: 2 * time.Second, Sweep: time.Second, WorstSweep: 1563 * time.Millisecond}, true,
			"covers the group at the measured latency; if every executor hung, each would be probed every 1.563s (verdicts fresh within verdict-ttl); for once per interval raise max-concurrency to 1000 or probe-interval to 2s"},
		{"10,000 executors, 30% hanging: more slots or a longer interval and TTL", def, 10000, 240 * time.Millisecond, 20000,
			Coverage{Capacity: 1706, WorstCapacity: 512, Concurrency: 3000, WorstConcurrency: 10000,
				Interval: 5900 * time.Millisecond, WorstInterval: 19600 * time.Millisecond,
				Sweep: 4688 * time.Millisecond, WorstSweep: 15625 * time.Millisecond}, false,
			"does not cover the group at the measured latency: each executor is probed every 4.688s (some verdicts may go stale); raise max-concurrency to 3000 or probe-interval to 5.9s with verdict-ttl at least 6.7s"},
		{"20,000 executors all hanging: beyond the concurrency cap, only the interval", def, 20000, 800 * time.Millisecond, 1 << 20,
			Coverage{Capacity: 512, WorstCapacity: 512, Concurrency: 20000, WorstConcurrency: 20000,
				Interval: 39100 * time.Millisecond, WorstInterval: 39100 * time.Millisecond,
				Sweep: 31250 * time.Millisecond, WorstSweep: 31250 * time.Millisecond}, false,
			"does not cover the group at the measured latency: each executor is probed every 31.25s (some verdicts may go stale); raise probe-interval to 39.1s with verdict-ttl at least 39.9s (max-concurrency above 8192 is refused)"},
		{"a TTL shorter than interval + timeout goes stale between probes", shortTTL, 10, time.Millisecond, 20000,
			Coverage{Capacity: 819200, WorstCapacity: 819, Concurrency: 1, WorstConcurrency: 7,
				Interval: 100 * time.Millisecond, WorstInterval: 100 * time.Millisecond, Sweep: 2 * time.Second, WorstSweep: 2 * time.Second}, false,
			"raise health-monitor.verdict-ttl to at least 3s (probe-interval + probe-timeout), or verdicts go stale between probes"},
		{"1,000 executors under the usual ulimit of 1024: probes would fail as misses", def, 1000, 240 * time.Millisecond, 1024,
			Coverage{Capacity: 1706, WorstCapacity: 512, Concurrency: 300, WorstConcurrency: 1000,
				Interval: 600 * time.Millisecond, WorstInterval: 2 * time.Second, Sweep: time.Second, WorstSweep: 1563 * time.Millisecond}, false,
			"raise the open-file limit (ulimit -n, now 1024) to at least 2667: the monitor may hold 1643 connections and the node needs its own; a probe that cannot open one is a miss"},
	}
	for _, c := range cases {
		c.want.Members, c.want.Measured, c.want.cfg, c.want.TTL = c.members, c.measured, c.cfg, c.cfg.ProbeInterval+c.cfg.ProbeTimeout
		// Canaries: one per slot, and the connections kept idle for 2 x
		// the suspect interval (4s of every 60s: 67 of 1,000 executors).
		idle, every := int(2*c.cfg.CanarySuspectInterval/time.Second), int(c.cfg.CanaryInterval/time.Second)
		canaries := min(c.members, c.cfg.CanaryMaxConcurrency) + min(c.members, (c.members*idle+every-1)/every)
		c.want.FDs, c.want.FDLimit = min(c.members, maxIdleConns)+min(c.members, c.cfg.MaxConcurrency)+canaries, c.fdLimit
		got := CoverageOf(c.cfg, c.members, c.measured, c.fdLimit)
		if got != c.want {
			t.Errorf("%s:\n got %+v\nwant %+v", c.name, got, c.want)
		}
		if got.Covered() != c.covered || got.Advice() != c.advice {
			t.Errorf("%s: covered=%v %q, want %v %q", c.name, got.Covered(), got.Advice(), c.covered, c.advice)
		}
	}
}

// The canary arithmetic: canary-max-concurrency x canary-interval /
// latency x 80% against the canaried members, and the advice naming the
// canary keys (with the canary-ttl a longer interval needs).
func TestCanaryCoverage(t *testing.T) {
	def := DefaultConfig() // 64 slots, 10s timeout
	def.CanaryInterval, def.CanaryTTL, def.CanaryWindow, def.CanaryMinSamples = 30*time.Second, 10*time.Minute, 16, 4
	off := def
	off.CanaryEnabled = false
	cases := []struct {
		name     string
		cfg      Config
		members  int
		measured time.Duration
		capacity int // at the mean (0 unmeasured), then if all hang
		worst    int
		covered  bool
		advice   string
	}{
		{"100 executors, nothing measured", def, 100, 0, 0, 153, true, "covers the canaried members even if every canary hangs"},
		{"1,000 executors, nothing measured", def, 1000, 0, 0, 153, false,
			"no canary latency measured yet; if every canary hung, raise canary-max-concurrency to 417 or canary-interval to 3m15.4s with canary-ttl at least 13m11.6s"},
		{"1,000 executors at 500ms", def, 1000, 500 * time.Millisecond, 3072, 153, true,
			"covers the canaried members at the measured latency; if every canary hung, raise canary-max-concurrency to 417 or canary-interval to 3m15.4s with canary-ttl at least 13m11.6s"},
		{"1,000 executors at 2s: more slots or a longer interval", def, 1000, 2 * time.Second, 768, 153, false,
			"does not cover the canaried members at the measured latency (canaries come less often than once per interval); raise canary-max-concurrency to 84 or canary-interval to 39.1s"},
		{"30,000 executors all hanging: beyond the concurrency cap", def, 30000, 10 * time.Second, 153, 153, false,
			"does not cover the canaried members at the measured latency (canaries come less often than once per interval); raise canary-interval to 1h37m39.4s with canary-ttl at least 6h30m47.6s (canary-max-concurrency above 8192 is refused)"},
		{"canaries off", off, 1000, 0, 0, 153, true, "canaries are off: every service report is unknown"},
	}
	for _, c := range cases {
		got := CanaryCoverageOf(c.cfg, c.members, c.measured)
		if got.Capacity != c.capacity || got.WorstCapacity != c.worst || got.Covered() != c.covered || got.Advice() != c.advice {
			t.Errorf("%s: capacity %d/%d covered=%v %q\nwant %d/%d %v %q", c.name, got.Capacity, got.WorstCapacity, got.Covered(),
				got.Advice(), c.capacity, c.worst, c.covered, c.advice)
		}
	}
}

// Every metric the monitor exports is in its README's table, under its
// Prometheus name.
func TestReadmeListsEveryMetric(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range metricNames {
		full := strings.Join(MetricKey(n), "_")
		if !strings.Contains(string(readme), "| `"+full+"`") {
			t.Errorf("README.md has no row for %s", full)
		}
	}
}

// metricNames is every metric of metrics.go, for the README check.
var metricNames = []string{
	MetricProbesOK, MetricProbesMiss, metricProbeLatency, metricInFlight, metricScheduleLag,
	metricMembers, metricCapacity, metricCapacityWorst,
	metricVerdictsFresh, metricVerdictsOK, metricVerdictsMiss, metricVerdictsStale, metricVerdictsNone, metricOldestVerdict,
	MetricCanariesSent, MetricCanariesOK, MetricCanariesMiss, metricCanaryLatency, metricCanaryInFlight, metricCanaryLag,
	metricCanaryCapacity, metricReportsKnown, metricReportsUnknown, metricSuspects,
}
