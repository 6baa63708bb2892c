// Package appmetrics declares the app's Prometheus series (inference_*):
// every one is a client_golang collector created when its package is
// loaded, so it exists, at zero, from the moment the node registers them
// (app.New, when [telemetry] is enabled), and it never expires. The node
// serves them with CometBFT's on CometBFT's Prometheus endpoint (the
// default registry); see docs/metrics.md.
//
// go-metrics, which the SDK's telemetry package wraps, creates a series on
// its first event and deletes it after prometheus-retention-time without
// one: a counter of rare events (an empty bundle, a pruned extension) was
// absent on a healthy chain, and alerts on it could never fire. This
// package replaces it for the app's own series; the SDK's stay on
// go-metrics.
package appmetrics

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

var (
	mu         sync.Mutex
	declared   []prometheus.Collector
	names      []string
	registered = map[prometheus.Registerer]bool{}
)

// Name is the Prometheus name of a metric key: its parts joined by "_"
// (the name go-metrics gave the same key, so series keep their names).
func Name(key []string) string { return strings.Join(key, "_") }

func declare[C prometheus.Collector](name string, c C) C {
	mu.Lock()
	defer mu.Unlock()
	if slices.Contains(names, name) {
		// Two packages declaring one name is a programming error that
		// Register would report only at start-up; say it at load time.
		panic(fmt.Sprintf("appmetrics: %s declared twice", name))
	}
	declared = append(declared, c)
	names = append(names, name)
	return c
}

// NewCounter declares a counter.
func NewCounter(key []string, help string) prometheus.Counter {
	name := Name(key)
	return declare(name, prometheus.NewCounter(prometheus.CounterOpts{Name: name, Help: help}))
}

// NewCounterVec declares a labelled counter. Each entry of known is one
// set of label values (in the order of labels) that exists at zero from
// the start; other sets appear on their first increment.
func NewCounterVec(key []string, help string, labels []string, known [][]string) *prometheus.CounterVec {
	name := Name(key)
	v := prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, labels)
	for _, values := range known {
		v.WithLabelValues(values...)
	}
	return declare(name, v)
}

// NewGauge declares a gauge (zero until first set).
func NewGauge(key []string, help string) prometheus.Gauge {
	name := Name(key)
	return declare(name, prometheus.NewGauge(prometheus.GaugeOpts{Name: name, Help: help}))
}

// NewSummary declares a summary of durations in milliseconds, with the
// quantiles and the 10 s window go-metrics' summaries had.
func NewSummary(key []string, help string) prometheus.Summary {
	name := Name(key)
	return declare(name, prometheus.NewSummary(prometheus.SummaryOpts{
		Name: name, Help: help + " (ms)", MaxAge: 10 * time.Second,
		Objectives: map[float64]float64{0.5: 0.05, 0.9: 0.01, 0.99: 0.001},
	}))
}

// Millis is d in milliseconds, the unit of every summary here.
func Millis(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// Register registers every declared series with reg; registering with the
// same registry again (several apps in one process) is a no-op.
func Register(reg prometheus.Registerer) error {
	mu.Lock()
	defer mu.Unlock()
	if registered[reg] {
		return nil
	}
	for i, c := range declared {
		if err := reg.Register(c); err != nil {
			var already prometheus.AlreadyRegisteredError
			if errors.As(err, &already) && already.ExistingCollector == c {
				continue
			}
			return fmt.Errorf("register %s: %w", names[i], err)
		}
	}
	registered[reg] = true
	return nil
}

// Names is every declared series name, sorted.
func Names() []string {
	mu.Lock()
	defer mu.Unlock()
	out := slices.Clone(names)
	slices.Sort(out)
	return out
}

// Integer is what Add and Set take: consensus code counts in integers and
// never converts to a float itself (the lint forbids floats there).
type Integer interface {
	~int | ~int32 | ~int64 | ~uint | ~uint32 | ~uint64
}

// Add adds n to c.
func Add[N Integer](c prometheus.Counter, n N) { c.Add(float64(n)) }

// Set sets g to n.
func Set[N Integer](g prometheus.Gauge, n N) { g.Set(float64(n)) }
