package monitor

import (
	"time"

	"github.com/inferenced/inferenced/appmetrics"
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

// The series, declared once (appmetrics): each exists at zero from the
// node's start.
var (
	seriesProbesOK       = appmetrics.NewCounter(MetricKey(MetricProbesOK), "health-monitor probes answered 200 in time")
	seriesProbesMiss     = appmetrics.NewCounter(MetricKey(MetricProbesMiss), "health-monitor probes that failed, timed out or answered otherwise")
	seriesProbeLatency   = appmetrics.NewSummary(MetricKey(metricProbeLatency), "health-monitor probe duration, hung ones included")
	seriesInFlight       = appmetrics.NewGauge(MetricKey(metricInFlight), "health-monitor probes running")
	seriesScheduleLag    = appmetrics.NewGauge(MetricKey(metricScheduleLag), "seconds the most overdue executor waits for a probe slot")
	seriesMembers        = appmetrics.NewGauge(MetricKey(metricMembers), "executors in the watched group")
	seriesCapacity       = appmetrics.NewGauge(MetricKey(metricCapacity), "executors the config covers at the mean probe latency")
	seriesCapacityWorst  = appmetrics.NewGauge(MetricKey(metricCapacityWorst), "executors the config covers if every probe times out")
	seriesVerdictsFresh  = appmetrics.NewGauge(MetricKey(metricVerdictsFresh), "verdicts within verdict-ttl (ok or miss) in the last snapshot")
	seriesVerdictsOK     = appmetrics.NewGauge(MetricKey(metricVerdictsOK), "fresh ok verdicts in the last snapshot")
	seriesVerdictsMiss   = appmetrics.NewGauge(MetricKey(metricVerdictsMiss), "fresh miss verdicts in the last snapshot")
	seriesVerdictsStale  = appmetrics.NewGauge(MetricKey(metricVerdictsStale), "verdicts older than verdict-ttl in the last snapshot (reported unknown)")
	seriesVerdictsNone   = appmetrics.NewGauge(MetricKey(metricVerdictsNone), "executors never probed yet in the last snapshot (reported unknown)")
	seriesOldestVerdict  = appmetrics.NewGauge(MetricKey(metricOldestVerdict), "age in seconds of the oldest verdict, or of the wait for a first one")
	seriesCanariesSent   = appmetrics.NewCounter(MetricKey(MetricCanariesSent), "canary inferences started")
	seriesCanariesOK     = appmetrics.NewCounter(MetricKey(MetricCanariesOK), "canaries answered 200 with their own inference id")
	seriesCanariesMiss   = appmetrics.NewCounter(MetricKey(MetricCanariesMiss), "canaries that failed, timed out or answered otherwise")
	seriesCanaryLatency  = appmetrics.NewSummary(MetricKey(metricCanaryLatency), "canary duration, hung ones included")
	seriesCanaryInFlight = appmetrics.NewGauge(MetricKey(metricCanaryInFlight), "canaries running")
	seriesCanaryLag      = appmetrics.NewGauge(MetricKey(metricCanaryLag), "seconds the most overdue canary waits for a slot")
	seriesCanaryCapacity = appmetrics.NewGauge(MetricKey(metricCanaryCapacity), "executors the canary config covers at the mean latency")
	seriesReportsKnown   = appmetrics.NewGauge(MetricKey(metricReportsKnown), "executors with a service report in the last Service call")
	seriesReportsUnknown = appmetrics.NewGauge(MetricKey(metricReportsUnknown), "executors reported unknown in the last Service call")
	seriesSuspects       = appmetrics.NewGauge(MetricKey(metricSuspects), "executors suspect (chain-marked or a CUSUM above 0)")
)

func reportProbe(ok bool, start time.Time) {
	if ok {
		seriesProbesOK.Inc()
	} else {
		seriesProbesMiss.Inc()
	}
	seriesProbeLatency.Observe(appmetrics.Millis(time.Since(start)))
}

func reportCanarySent() { seriesCanariesSent.Inc() }

func reportCanary(ok bool, start time.Time) {
	if ok {
		seriesCanariesOK.Inc()
	} else {
		seriesCanariesMiss.Inc()
	}
	seriesCanaryLatency.Observe(appmetrics.Millis(time.Since(start)))
}

// scheduleGauges is what one group read saw of the schedule.
type scheduleGauges struct {
	inFlight, canaryInFlight int
	lag, canaryLag           time.Duration
	suspects                 int
}

func reportSchedule(c Coverage, cc CanaryCoverage, g scheduleGauges) {
	seriesInFlight.Set(float64(g.inFlight))
	seriesScheduleLag.Set(g.lag.Seconds())
	seriesMembers.Set(float64(c.Members))
	seriesCapacity.Set(float64(c.Capacity))
	seriesCapacityWorst.Set(float64(c.WorstCapacity))
	seriesCanaryInFlight.Set(float64(g.canaryInFlight))
	seriesCanaryLag.Set(g.canaryLag.Seconds())
	seriesCanaryCapacity.Set(float64(cc.Capacity))
	seriesSuspects.Set(float64(g.suspects))
}

func reportService(known, unknown int) {
	seriesReportsKnown.Set(float64(known))
	seriesReportsUnknown.Set(float64(unknown))
}

// verdictCounts is what one snapshot saw.
type verdictCounts struct {
	ok, miss, stale, unknown int
	oldest                   time.Duration
}

func reportVerdicts(c verdictCounts) {
	seriesVerdictsFresh.Set(float64(c.ok + c.miss))
	seriesVerdictsOK.Set(float64(c.ok))
	seriesVerdictsMiss.Set(float64(c.miss))
	seriesVerdictsStale.Set(float64(c.stale))
	seriesVerdictsNone.Set(float64(c.unknown))
	seriesOldestVerdict.Set(c.oldest.Seconds())
}
