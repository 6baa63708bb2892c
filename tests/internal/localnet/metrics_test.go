package localnet

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"
	"time"
)

// A Prometheus text page as both endpoints write it: comments, series with
// and without labels, a summary's quantiles, a timestamp.
const metricsPage = `# HELP inference_monitor_probes_ok inference_monitor_probes_ok
# TYPE inference_monitor_probes_ok counter
inference_monitor_probes_ok 1200
inference_monitor_probes_miss 34
inference_monitor_probe_latency{quantile="0.5"} 1.5
inference_monitor_probe_latency{quantile="0.99"} 202.75
inference_breaker_transitions{from="HEALTH_STATE_HEALTHY",reason="HEALTH_REASON_CONSECUTIVE_MISSES",to="HEALTH_STATE_EXCLUDED"} 3
inference_breaker_transitions{from="HEALTH_STATE_EXCLUDED",reason="HEALTH_REASON_COOLDOWN_PASSED",to="HEALTH_STATE_PROBE"} 2
cometbft_consensus_height{chain_id="inferenced-local"} 42 1733000000000

`

func TestReadMetricsSumsSeries(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprint(w, metricsPage)
	}))
	defer srv.Close()
	m, err := readMetrics(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		want float64
	}{
		{ProbeMetrics[0], 1200},
		{ProbeMetrics[1], 34},
		{"inference_breaker_transitions", 5},
		{"cometbft_consensus_height", 42},
		{"inference_monitor_probe", 0}, // a prefix of a name is not the name
		{"absent", 0},
	} {
		if got := m.Sum(tc.name); got != tc.want {
			t.Errorf("Sum(%s) = %v, want %v", tc.name, got, tc.want)
		}
	}
	if got := m[`inference_monitor_probe_latency{quantile="0.99"}`]; got != 202.75 {
		t.Errorf("p99 series %v", got)
	}
}

func TestReadMetricsRefusesGarbage(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprint(w, "inference_monitor_probes_ok many\n")
	}))
	defer srv.Close()
	if _, err := readMetrics(srv.URL); err == nil {
		t.Fatal("a value that is not a number was read")
	}
}

// The CPU time of this very process moves forward while it spins (in
// clock ticks: spin until one passes, at most 5 s of wall time).
func TestCPUTimeOfAProcess(t *testing.T) {
	before, err := cpuTime(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	after := before
	for deadline := time.Now().Add(5 * time.Second); after <= before && time.Now().Before(deadline); {
		for end := time.Now().Add(20 * time.Millisecond); time.Now().Before(end); {
		}
		if after, err = cpuTime(os.Getpid()); err != nil {
			t.Fatal(err)
		}
	}
	if after <= before {
		t.Fatalf("CPU time %s then %s after spinning", before, after)
	}
	if _, err := cpuTime(1 << 30); err == nil {
		t.Fatal("a pid that does not exist has a CPU time")
	}
}
