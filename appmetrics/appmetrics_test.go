package appmetrics

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// A counter of a rare event must be scraped (at 0) before its first event:
// go-metrics created it on the first event, so an alert on its increase
// could never fire on a healthy chain.
func TestDeclaredSeriesExistAtZeroBeforeAnyEvent(t *testing.T) {
	c := NewCounter([]string{"inference", "test", "rare_events"}, "test counter")
	v := NewCounterVec([]string{"inference", "test", "edges"}, "test vec", []string{"from", "to"},
		[][]string{{"a", "b"}, {"b", "a"}})
	reg := prometheus.NewRegistry()
	if err := Register(reg); err != nil {
		t.Fatal(err)
	}
	if err := Register(reg); err != nil {
		t.Fatalf("registering twice with one registry: %v", err)
	}
	const want = `
# HELP inference_test_edges test vec
# TYPE inference_test_edges counter
inference_test_edges{from="a",to="b"} 0
inference_test_edges{from="b",to="a"} 0
# HELP inference_test_rare_events test counter
# TYPE inference_test_rare_events counter
inference_test_rare_events 0
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "inference_test_rare_events", "inference_test_edges"); err != nil {
		t.Fatal(err)
	}
	Add(c, 3)
	v.WithLabelValues("a", "b").Inc()
	if got := testutil.ToFloat64(c); got != 3 {
		t.Fatalf("counter after Add(3) = %v", got)
	}
	if got := testutil.ToFloat64(v.WithLabelValues("b", "a")); got != 0 {
		t.Fatalf("untouched edge = %v", got)
	}
}

func TestRegisterWithAnotherRegistryFailsOnAClash(t *testing.T) {
	reg := prometheus.NewRegistry()
	// Someone else's collector under one of our names: Register must say
	// which name clashed rather than serve two series of that name.
	NewGauge([]string{"inference", "test", "clash"}, "ours")
	reg.MustRegister(prometheus.NewGauge(prometheus.GaugeOpts{Name: "inference_test_clash", Help: "theirs"}))
	err := Register(reg)
	if err == nil || !strings.Contains(err.Error(), "inference_test_clash") {
		t.Fatalf("Register with a clashing collector: %v", err)
	}
}

func TestDeclaringANameTwicePanics(t *testing.T) {
	NewCounter([]string{"inference", "test", "twice"}, "first")
	defer func() {
		if recover() == nil {
			t.Fatal("a second declaration of inference_test_twice did not panic")
		}
	}()
	NewCounter([]string{"inference", "test", "twice"}, "second")
}

func TestSummaryIsInMilliseconds(t *testing.T) {
	s := NewSummary([]string{"inference", "test", "latency"}, "test summary")
	s.Observe(Millis(1500_000)) // 1.5 ms
	reg := prometheus.NewRegistry()
	reg.MustRegister(s)
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	if got := mfs[0].GetMetric()[0].GetSummary().GetSampleSum(); got != 1.5 {
		t.Fatalf("sum of one 1.5 ms observation = %v", got)
	}
}
