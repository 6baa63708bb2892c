package app

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"cosmossdk.io/log/v2"
	simtestutil "github.com/cosmos/cosmos-sdk/testutil/sims"
	"github.com/gorilla/mux"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/inferenced/inferenced/appmetrics"
)

// exposed is every series name reg serves (a summary's _sum and _count too).
func exposed(t *testing.T, reg prometheus.Gatherer) map[string]float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			switch {
			case m.GetCounter() != nil:
				out[mf.GetName()] += m.GetCounter().GetValue()
			case m.GetSummary() != nil:
				out[mf.GetName()] = 0
				out[mf.GetName()+"_sum"] += m.GetSummary().GetSampleSum()
				out[mf.GetName()+"_count"] += float64(m.GetSummary().GetSampleCount())
			default:
				out[mf.GetName()] = m.GetGauge().GetValue()
			}
		}
	}
	return out
}

// servedAtStart is what a fresh registry serves as soon as a node with
// telemetry on has registered the app's series (every series, whether or
// not anything in this test binary counted on it yet).
func servedAtStart(t *testing.T) map[string]float64 {
	t.Helper()
	reg := prometheus.NewRegistry()
	opts := simtestutil.AppOptionsMap{"telemetry.enabled": true, "instrumentation.prometheus": true}
	if err := registerMetrics(opts, log.NewNopLogger(), reg); err != nil {
		t.Fatal(err)
	}
	return exposed(t, reg)
}

func TestTelemetryRegistersEveryAppSeries(t *testing.T) {
	got := servedAtStart(t)
	for _, name := range appmetrics.Names() {
		if _, ok := got[name]; !ok {
			t.Errorf("%s is declared but not served", name)
		}
	}
	// The rare-event counters the issue found missing on a healthy chain,
	// and one breaker edge, exist before any event.
	for _, name := range []string{"inference_attestation_empty_bundles", "inference_attestation_pruned_extensions",
		"inference_breaker_traffic_misses_held", "inference_breaker_transitions"} {
		if _, ok := got[name]; !ok {
			t.Errorf("%s is not served before its first event", name)
		}
	}
}

func TestTelemetryOffRegistersNothing(t *testing.T) {
	reg := prometheus.NewRegistry()
	if err := registerMetrics(simtestutil.AppOptionsMap{}, log.NewNopLogger(), reg); err != nil {
		t.Fatal(err)
	}
	if got := exposed(t, reg); len(got) != 0 {
		t.Fatalf("telemetry off, yet %d series registered", len(got))
	}
}

// An operator who enables telemetry but not CometBFT's endpoint is told
// that no endpoint serves the app's series (nothing else would say so).
func TestTelemetryWithoutCometPrometheusWarns(t *testing.T) {
	var buf bytes.Buffer
	opts := simtestutil.AppOptionsMap{"telemetry.enabled": true}
	if err := registerMetrics(opts, log.NewLogger(&buf), prometheus.NewRegistry()); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "prometheus_listen_addr") {
		t.Fatalf("no warning naming the endpoint; logged %q", buf.String())
	}
	buf.Reset()
	opts["instrumentation.prometheus"] = true
	if err := registerMetrics(opts, log.NewLogger(&buf), prometheus.NewRegistry()); err != nil {
		t.Fatal(err)
	}
	if buf.Len() != 0 {
		t.Fatalf("warned with CometBFT's endpoint on: %q", buf.String())
	}
}

// The REST server's Prometheus format served the default registry a
// second time (every series twice for a Prometheus scraping both
// endpoints); it now answers 404 naming the endpoint to scrape, and the
// SDK's route still answers its other formats.
func TestRESTRefusesThePrometheusFormatOnly(t *testing.T) {
	r := mux.NewRouter()
	refusePrometheusOnREST(r)
	// What api.Server.SetTelemetry registers after RegisterAPIRoutes.
	r.HandleFunc("/metrics", func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "sdk") }).Methods("GET")
	for _, c := range []struct {
		query, body string
		code        int
	}{
		{"?format=prometheus", "prometheus_listen_addr", http.StatusNotFound},
		{"?format=%20prometheus", "prometheus_listen_addr", http.StatusNotFound},
		{"", "sdk", http.StatusOK},
		{"?format=text", "sdk", http.StatusOK},
	} {
		rec := httptest.NewRecorder()
		r.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics"+c.query, nil))
		if rec.Code != c.code || !strings.Contains(rec.Body.String(), c.body) {
			t.Errorf("GET /metrics%s: %d %q, want %d with %q", c.query, rec.Code, rec.Body.String(), c.code, c.body)
		}
	}
}
