package localnet_test

import (
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/inferenced/inferenced/appmetrics/metricsdoc"
	ln "github.com/inferenced/inferenced/tests/internal/localnet"
)

// metricsSettle bounds the wait, for all validators together, for
// CometBFT's labelled series, which appear on their first event (a
// proposal or an extension received): a few blocks after start.
const metricsSettle = time.Minute

// checkDocumentedMetricsServedOnce scrapes both endpoints of every
// validator, as a Prometheus set up from the docs' old two-endpoint table
// would, and
// requires every metric the docs and the alert rules name to be served by
// exactly one of them: present (an alert on an absent series is silently
// empty) and not twice (a second endpoint doubled every series and every
// alert).
func checkDocumentedMetricsServedOnce(t *testing.T, n *ln.Net, validators int) {
	names, err := metricsdoc.Names("../..")
	if err != nil {
		t.Fatal(err)
	}
	sorted := make([]string, 0, len(names))
	for name := range names {
		sorted = append(sorted, name)
	}
	slices.Sort(sorted)
	deadline := time.Now().Add(metricsSettle)
	for i := 0; i < validators; i++ {
		node, missing := settledMetrics(t, n, i, sorted, deadline)
		for _, name := range missing {
			t.Errorf("validator %d: %s (named in %s) is not served", i, name, names[name])
		}
		rest := restSeries(t, n.RESTPrometheus(i))
		for _, name := range sorted {
			if node.Has(name) && rest.Has(name) {
				t.Errorf("validator %d: %s is served on both endpoints", i, name)
			}
		}
	}
	t.Logf("%d metric names from the docs and the rules, each on exactly one endpoint of each of %d validators", len(sorted), validators)
}

// settledMetrics reads validator i's endpoint until it serves every name
// or the deadline passes, and returns the last reading with what it lacks.
func settledMetrics(t *testing.T, n *ln.Net, i int, names []string, deadline time.Time) (ln.Metrics, []string) {
	t.Helper()
	for {
		m, err := n.NodeMetrics(i)
		if err != nil {
			t.Fatalf("validator %d's metrics: %v", i, err)
		}
		var missing []string
		for _, name := range names {
			if !m.Has(name) {
				missing = append(missing, name)
			}
		}
		if len(missing) == 0 || time.Now().After(deadline) {
			return m, missing
		}
		time.Sleep(2 * time.Second)
	}
}

// restSeries reads the REST server's Prometheus format, which must answer
// 404 naming the endpoint that serves the series, and serve none.
func restSeries(t *testing.T, url string) ln.Metrics {
	t.Helper()
	client := &http.Client{Timeout: 10 * time.Second}
	res, err := client.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(io.LimitReader(res.Body, 1<<20))
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	if res.StatusCode != http.StatusNotFound || !strings.Contains(string(body), "prometheus_listen_addr") {
		t.Errorf("GET %s: %s %.200q, want 404 naming prometheus_listen_addr", url, res.Status, body)
	}
	m := ln.Metrics{}
	for _, line := range strings.Split(string(body), "\n") {
		if f := strings.Fields(line); len(f) == 2 && !strings.HasPrefix(line, "#") {
			m[f[0]] = 0 // a series line, whatever the status said
		}
	}
	return m
}
