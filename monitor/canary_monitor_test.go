package monitor

import (
	"encoding/json"
	"net/http"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"cosmossdk.io/log/v2"

	"github.com/inferenced/inferenced/x/inference/service"
	"github.com/inferenced/inferenced/x/inference/verdict"
)

// inferer is a test executor with a health endpoint and an inference
// endpoint, each of which can fail or hang; it counts the requests each
// received and the inference requests whose client went away.
type inferer struct {
	url                       string
	failInference             atomic.Bool
	hangInference, hangHealth atomic.Bool
	health, inferences, gone  atomic.Int64
}

func newInferer(t *testing.T) *inferer {
	e := &inferer{}
	e.url = server(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/health" {
			e.health.Add(1)
			if e.hangHealth.Load() {
				<-r.Context().Done()
			}
			return
		}
		e.inferences.Add(1)
		var req map[string]string
		_ = json.NewDecoder(r.Body).Decode(&req) // the whole body: then the server sees the client leave
		if e.hangInference.Load() {
			<-r.Context().Done()
			e.gone.Add(1)
			return
		}
		if e.failInference.Load() {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		_ = json.NewEncoder(w).Encode(map[string]string{"inference_id": req["inference_id"]})
	}).URL
	return e
}

// canaryConfig canaries every 100ms, reports from 2 outcomes of 4.
func canaryConfig() Config {
	c := testConfig()
	c.CanaryInterval, c.CanarySuspectInterval, c.CanaryTimeout = 100*time.Millisecond, 100*time.Millisecond, 300*time.Millisecond
	c.CanaryWindow, c.CanaryMinSamples, c.CanaryTTL = 4, 2, time.Minute
	return c
}

func reports(m *Monitor, epoch uint64, n int) []service.Report {
	r, err := m.Service(epoch, n)
	if err != nil {
		return nil
	}
	return r
}

// Service reports each executor's failed share: 0% for one that serves,
// 100% for one that fails every inference while its health endpoint
// answers (the case health probes cannot see), unknown for one without a
// model; only for the watched group.
func TestMonitorServiceReportsCanaryOutcomes(t *testing.T) {
	good, bad, none := newInferer(t), newInferer(t), newInferer(t)
	bad.failInference.Store(true)
	src := &source{group: Group{Epoch: 3, Members: []Member{
		{Address: "good", URL: good.url, Model: "m"}, {Address: "bad", URL: bad.url, Model: "m"}, {Address: "none", URL: none.url},
	}}}
	m := startMonitor(t, canaryConfig(), src, log.NewNopLogger())
	want := []service.Report{0, 100, service.Unknown}
	waitFor(t, "reports 0%, 100%, unknown", func() bool { return slices.Equal(reports(m, 3, 3), want) })
	waitFor(t, "health ok for all", func() bool { return allVerdicts(m, 3, 3, verdict.OK) })
	if none.inferences.Load() != 0 {
		t.Error("a canary to a member without a model")
	}
	for _, bad := range [][2]int{{2, 3}, {4, 3}, {3, 2}} {
		if _, err := m.Service(uint64(bad[0]), bad[1]); err == nil {
			t.Errorf("a report for epoch %d with %d members", bad[0], bad[1])
		}
	}
}

// Canaries that hang hold canary slots only: with the single canary slot
// held by a hung canary for 10 intervals, every executor's health is still
// probed each interval.
func TestMonitorHungCanariesDelayNoProbes(t *testing.T) {
	hung := newInferer(t)
	hung.hangInference.Store(true)
	src := &source{group: Group{Epoch: 1, Members: []Member{{Address: "hung", URL: hung.url, Model: "m"}}}}
	var others []*inferer
	for range 3 {
		e := newInferer(t)
		others = append(others, e)
		src.group.Members = append(src.group.Members, Member{URL: e.url, Model: "m"})
	}
	cfg := canaryConfig()
	cfg.CanaryMaxConcurrency, cfg.CanaryInterval, cfg.CanaryTimeout, cfg.MaxConcurrency = 1, time.Second, 5*time.Second, 2
	m := startMonitor(t, cfg, src, log.NewNopLogger())
	waitFor(t, "the hung canary is in flight", func() bool { return hung.inferences.Load() == 1 })
	before := hung.health.Load()
	waitFor(t, "every executor probed thrice more", func() bool {
		for _, e := range append(others, hung) {
			if e.health.Load() < before+3 {
				return false
			}
		}
		return true
	})
	m.mu.RLock()
	defer m.mu.RUnlock()
	if !m.sched.targets[0].c.inFlight || m.canaryInFlight != 1 {
		t.Fatal("the hung canary ended before the probes went on")
	}
}

// Probes that hang hold probe slots only: with the single probe slot held
// by a hung probe for 10 probe intervals (50 canary intervals), every
// executor still gets canaries.
func TestMonitorHungProbesDelayNoCanaries(t *testing.T) {
	hung := newInferer(t)
	hung.hangHealth.Store(true)
	src := &source{group: Group{Epoch: 1, Members: []Member{{Address: "hung", URL: hung.url, Model: "m"}}}}
	var others []*inferer
	for range 3 {
		e := newInferer(t)
		others = append(others, e)
		src.group.Members = append(src.group.Members, Member{URL: e.url, Model: "m"})
	}
	cfg := canaryConfig()
	cfg.MaxConcurrency, cfg.ProbeInterval, cfg.ProbeTimeout, cfg.VerdictTTL = 1, 500*time.Millisecond, 5*time.Second, 5*time.Second
	m := startMonitor(t, cfg, src, log.NewNopLogger())
	waitFor(t, "the hung probe is in flight", func() bool { return hung.health.Load() >= 1 })
	waitFor(t, "every executor canaried thrice", func() bool {
		for _, e := range append(others, hung) {
			if e.inferences.Load() < 3 {
				return false
			}
		}
		return true
	})
	if hung.health.Load() != 1 {
		t.Fatal("the hung probe ended before the canaries went on")
	}
	waitFor(t, "reports known", func() bool { return slices.Equal(reports(m, 1, 4), []service.Report{0, 0, 0, 0}) })
}

// Stop cancels the canaries in flight and waits for them; a cancelled
// canary is no outcome.
func TestMonitorStopWaitsForCanaries(t *testing.T) {
	hung := newInferer(t)
	hung.hangInference.Store(true)
	src := &source{group: Group{Epoch: 1, Members: []Member{{URL: hung.url, Model: "m"}}}}
	cfg := canaryConfig()
	cfg.CanaryInterval, cfg.CanaryTimeout = time.Second, 5*time.Second
	m := startMonitor(t, cfg, src, log.NewNopLogger())
	waitFor(t, "the canary is in flight", func() bool { return hung.inferences.Load() == 1 })
	m.Stop()
	m.mu.RLock()
	defer m.mu.RUnlock()
	c := m.sched.targets[0].c
	if m.canaryInFlight != 0 || c.inFlight {
		t.Fatal("Stop returned with a canary in flight")
	}
	if len(c.ring.at) != 0 {
		t.Fatal("the cancelled canary was recorded as an outcome")
	}
	waitFor(t, "the executor sees the canary cancelled", func() bool { return hung.gone.Load() == 1 })
}

// A canary in flight to an executor that leaves the group is cancelled at
// once (not left to its timeout) and is no outcome.
func TestMonitorCanaryOfALeaverIsCancelled(t *testing.T) {
	leaver, stays := newInferer(t), newInferer(t)
	leaver.hangInference.Store(true)
	src := &source{group: Group{Epoch: 1, Members: []Member{{Address: "l", URL: leaver.url, Model: "m"}, {Address: "s", URL: stays.url, Model: "m"}}}}
	cfg := canaryConfig()
	cfg.CanaryInterval, cfg.CanaryTimeout = time.Second, 5*time.Second
	m := startMonitor(t, cfg, src, log.NewNopLogger())
	waitFor(t, "the canary is in flight", func() bool { return leaver.inferences.Load() == 1 })
	m.mu.RLock()
	gone := m.sched.targets[0]
	m.mu.RUnlock()
	src.set(Group{Epoch: 2, Members: []Member{{Address: "s", URL: stays.url, Model: "m"}}})
	start := time.Now()
	waitFor(t, "the leaver's canary is cancelled", func() bool { return leaver.gone.Load() == 1 })
	if d := time.Since(start); d >= cfg.CanaryTimeout {
		t.Fatalf("cancelled after %s, at the timeout", d)
	}
	waitFor(t, "the canary has ended", func() bool {
		m.mu.RLock()
		defer m.mu.RUnlock()
		return !gone.c.inFlight
	})
	m.mu.RLock()
	defer m.mu.RUnlock()
	if len(gone.c.ring.at) != 0 || m.canaryInFlight != 0 {
		t.Fatal("the cancelled canary of a leaver was recorded")
	}
}
