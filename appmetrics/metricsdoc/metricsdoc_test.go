package metricsdoc

import (
	"slices"
	"testing"
)

// The six placeholders docs/metrics.md once had in its alert expressions
// parse as metric names (promtool loads such a rule, and it can never
// fire): Identifiers must report them, so that a test can refuse them.
func TestIdentifiersReportPlaceholders(t *testing.T) {
	for _, c := range []struct {
		expr string
		want []string
	}{
		{"cometbft_p2p_peers < N-1", []string{"N", "cometbft_p2p_peers"}},
		{"inference_monitor_schedule_lag_seconds > probe-interval", []string{"inference_monitor_schedule_lag_seconds", "interval", "probe"}},
		{"inference_monitor_oldest_verdict_age_seconds > verdict-ttl", []string{"inference_monitor_oldest_verdict_age_seconds", "ttl", "verdict"}},
		{`inference_monitor_probe_latency{quantile="0.99"} > 0.5 * probe-timeout`, []string{"inference_monitor_probe_latency", "probe", "timeout"}},
		{"inference_attestation_extension_size_bytes > 0.8 * cap", []string{"cap", "inference_attestation_extension_size_bytes"}},
		{"inference_breaker_excluded > 0.1 * members", []string{"inference_breaker_excluded", "members"}},
	} {
		if got := Identifiers(c.expr); !slices.Equal(got, c.want) {
			t.Errorf("Identifiers(%q) = %q, want %q", c.expr, got, c.want)
		}
	}
}

func TestIdentifiersReadOnlyMetrics(t *testing.T) {
	for _, c := range []struct {
		expr string
		want []string
	}{
		{`increase(cometbft_consensus_proposal_receive_count{status="rejected"}[5m]) > 0`, []string{"cometbft_consensus_proposal_receive_count"}},
		{"max by (job) (inference_breaker_excluded) > 0.1 * max by (job) (inference_monitor_members)", []string{"inference_breaker_excluded", "inference_monitor_members"}},
		{"cometbft_consensus_height unless on (instance, job) inference_monitor_probes_ok", []string{"cometbft_consensus_height", "inference_monitor_probes_ok"}},
		{"rate(a[5m] offset 1h) > 1e3", []string{"a"}},
	} {
		if got := Identifiers(c.expr); !slices.Equal(got, c.want) {
			t.Errorf("Identifiers(%q) = %q, want %q", c.expr, got, c.want)
		}
	}
}

func TestDocNamesSkipsPatternPrefixes(t *testing.T) {
	text := "grep -E '^cometbft_consensus_(height|rounds) ' and `inference_monitor_probes_ok`, `_miss`; `cometbft_*`"
	if got, want := docNames(text), []string{"inference_monitor_probes_ok"}; !slices.Equal(got, want) {
		t.Fatalf("docNames = %q, want %q", got, want)
	}
}

func TestNamesReadsTheRepository(t *testing.T) {
	names, err := Names("../..")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"inference_attestation_empty_bundles", "cometbft_consensus_height", "inference_breaker_traffic_misses_held"} {
		if _, ok := names[want]; !ok {
			t.Errorf("%s not found in the docs or the rules", want)
		}
	}
	for name, where := range names {
		if !IsMetric(name) {
			t.Errorf("%s (in %s) is not a metric", name, where)
		}
	}
}
