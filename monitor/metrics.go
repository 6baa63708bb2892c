package monitor

import (
	"time"

	"github.com/cosmos/cosmos-sdk/telemetry"

	"github.com/inferenced/inferenced/x/inference/types"
)

// MetricKey names a metric of the health monitor: every one is
// inference_monitor_<name...> in Prometheus.
func MetricKey(name ...string) []string {
	return append([]string{types.ModuleName, "monitor"}, name...)
}

// The monitor's metrics, each written once here and listed in README.md
// (TestReadmeListsEveryMetric). The probe counters are exported for tools
// that read a node's metrics (the localnet harness's probes/s).
const (
	MetricProbesOK      = "probes_ok"                  // counter: probes answered 200 in time
	MetricProbesMiss    = "probes_miss"                // counter: probes that failed, timed out or answered otherwise
	metricProbeLatency  = "probe_latency"              // summary (ms): probe duration, hung ones included
	metricInFlight      = "probes_in_flight"           // gauge: probes running
	metricScheduleLag   = "schedule_lag_seconds"       // gauge: how long the most overdue executor waits for a slot
	metricMembers       = "members"                    // gauge: executors in the watched group
	metricCapacity      = "capacity"                   // gauge: executors the config covers at the mean latency
	metricCapacityWorst = "capacity_if_all_hang"       // gauge: executors it covers if every probe times out
	metricVerdictsFresh = "verdicts_fresh"             // gauge: verdicts within verdict-ttl (ok or miss) in the last snapshot
	metricVerdictsOK    = "verdicts_ok"                // gauge: fresh ok verdicts in the last snapshot
	metricVerdictsMiss  = "verdicts_miss"              // gauge: fresh miss verdicts in the last snapshot
	metricVerdictsStale = "verdicts_stale"             // gauge: verdicts older than verdict-ttl (reported unknown)
	metricVerdictsNone  = "verdicts_unknown"           // gauge: executors never probed yet (reported unknown)
	metricOldestVerdict = "oldest_verdict_age_seconds" // gauge: age of the oldest verdict, or of the wait for a first one

	MetricCanariesSent   = "canaries_sent"               // counter: canaries started (rate() is canaries sent/s)
	MetricCanariesOK     = "canaries_ok"                 // counter: canaries answered 200 with their own inference id
	MetricCanariesMiss   = "canaries_miss"               // counter: canaries that failed, timed out or answered otherwise
	metricCanaryLatency  = "canary_latency"              // summary (ms): canary duration, hung ones included
	metricCanaryInFlight = "canaries_in_flight"          // gauge: canaries running
	metricCanaryLag      = "canary_schedule_lag_seconds" // gauge: how long the most overdue canary waits for a slot
	metricCanaryCapacity = "canary_capacity"             // gauge: executors the canary config covers at the mean latency
	metricReportsKnown   = "service_reports_known"       // gauge: executors with a service report in the last Service call
	metricReportsUnknown = "service_reports_unknown"     // gauge: executors reported unknown in the last Service call
	metricSuspects       = "suspects"                    // gauge: executors suspect (chain-marked or a CUSUM above 0)
)

func reportProbe(ok bool, start time.Time) {
	if ok {
		telemetry.IncrCounter(1, MetricKey(MetricProbesOK)...)
	} else {
		telemetry.IncrCounter(1, MetricKey(MetricProbesMiss)...)
	}
	telemetry.MeasureSince(start, MetricKey(metricProbeLatency)...)
}

func reportCanarySent() { telemetry.IncrCounter(1, MetricKey(MetricCanariesSent)...) }

func reportCanary(ok bool, start time.Time) {
	if ok {
		telemetry.IncrCounter(1, MetricKey(MetricCanariesOK)...)
	} else {
		telemetry.IncrCounter(1, MetricKey(MetricCanariesMiss)...)
	}
	telemetry.MeasureSince(start, MetricKey(metricCanaryLatency)...)
}

// scheduleGauges is what one group read saw of the schedule.
type scheduleGauges struct {
	inFlight, canaryInFlight int
	lag, canaryLag           time.Duration
	suspects                 int
}

func reportSchedule(c Coverage, cc CanaryCoverage, g scheduleGauges) {
	telemetry.SetGauge(float32(g.inFlight), MetricKey(metricInFlight)...)
	telemetry.SetGauge(float32(g.lag.Seconds()), MetricKey(metricScheduleLag)...)
	telemetry.SetGauge(float32(c.Members), MetricKey(metricMembers)...)
	telemetry.SetGauge(float32(c.Capacity), MetricKey(metricCapacity)...)
	telemetry.SetGauge(float32(c.WorstCapacity), MetricKey(metricCapacityWorst)...)
	telemetry.SetGauge(float32(g.canaryInFlight), MetricKey(metricCanaryInFlight)...)
	telemetry.SetGauge(float32(g.canaryLag.Seconds()), MetricKey(metricCanaryLag)...)
	telemetry.SetGauge(float32(cc.Capacity), MetricKey(metricCanaryCapacity)...)
	telemetry.SetGauge(float32(g.suspects), MetricKey(metricSuspects)...)
}

func reportService(known, unknown int) {
	telemetry.SetGauge(float32(known), MetricKey(metricReportsKnown)...)
	telemetry.SetGauge(float32(unknown), MetricKey(metricReportsUnknown)...)
}

// verdictCounts is what one snapshot saw.
type verdictCounts struct {
	ok, miss, stale, unknown int
	oldest                   time.Duration
}

func reportVerdicts(c verdictCounts) {
	telemetry.SetGauge(float32(c.ok+c.miss), MetricKey(metricVerdictsFresh)...)
	telemetry.SetGauge(float32(c.ok), MetricKey(metricVerdictsOK)...)
	telemetry.SetGauge(float32(c.miss), MetricKey(metricVerdictsMiss)...)
	telemetry.SetGauge(float32(c.stale), MetricKey(metricVerdictsStale)...)
	telemetry.SetGauge(float32(c.unknown), MetricKey(metricVerdictsNone)...)
	telemetry.SetGauge(float32(c.oldest.Seconds()), MetricKey(metricOldestVerdict)...)
}
