package monitor

import (
	"bytes"
	"context"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"cosmossdk.io/log/v2"

	"github.com/inferenced/inferenced/x/inference/verdict"
)

// executor is a test executor that counts its probes and how many ran at
// once; hang makes it answer only when the probe gives up.
type executor struct {
	url                 string
	hang                atomic.Bool
	requests, now, peak atomic.Int64
	finished            atomic.Int64
}

func newExecutor(t *testing.T) *executor {
	e := &executor{}
	e.url = server(t, func(w http.ResponseWriter, r *http.Request) {
		e.requests.Add(1)
		cur := e.now.Add(1)
		for p := e.peak.Load(); cur > p && !e.peak.CompareAndSwap(p, cur); p = e.peak.Load() {
		}
		defer e.now.Add(-1)
		defer e.finished.Add(1)
		if e.hang.Load() {
			<-r.Context().Done()
			return
		}
		if strings.HasPrefix(r.URL.Path, "/slow") {
			time.Sleep(150 * time.Millisecond)
		}
	}).URL
	return e
}

// source serves a group the test can swap, and counts the reads.
type source struct {
	mu    sync.Mutex
	group Group
	reads int
}

func (s *source) read(context.Context) (Group, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reads++
	return s.group, nil
}

func (s *source) set(g Group) { s.mu.Lock(); s.group = g; s.mu.Unlock() }
func (s *source) count() int  { s.mu.Lock(); defer s.mu.Unlock(); return s.reads }

func startMonitor(t *testing.T, cfg Config, src *source, logger log.Logger) *Monitor {
	t.Helper()
	m, err := New(cfg, src.read, logger)
	if err != nil {
		t.Fatal(err)
	}
	m.Start()
	t.Cleanup(m.Stop)
	return m
}

// waitFor polls cond for at most 10 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("timed out waiting until %s", what)
}

func allVerdicts(m *Monitor, epoch uint64, n int, want verdict.Verdict) bool {
	vs, err := m.Snapshot(epoch, n)
	if err != nil {
		return false
	}
	for _, v := range vs {
		if v != want {
			return false
		}
	}
	return true
}

// A slot is reused as soon as its probe ends, not on the next tick: with
// two slots, twenty executors are all probed within the first group reads
// (a tick-based monitor needs ten ticks, one read each).
func TestMonitorReusesSlotsAtOnce(t *testing.T) {
	e := newExecutor(t)
	src := &source{group: Group{Epoch: 1}}
	for range 20 {
		src.group.Members = append(src.group.Members, Member{URL: e.url})
	}
	cfg := testConfig()
	cfg.MaxConcurrency = 2
	m := startMonitor(t, cfg, src, log.NewNopLogger())
	waitFor(t, "every executor is ok", func() bool { return allVerdicts(m, 1, 20, verdict.OK) })
	if reads := src.count(); reads > 5 {
		t.Fatalf("%d group reads (intervals) before all 20 were probed with 2 slots", reads)
	}
}

// One validator probes an executor at most once per interval, never twice
// at once, even when the executor takes longer than an interval to answer.
func TestMonitorOneProbePerExecutorPerInterval(t *testing.T) {
	fast, slow := newExecutor(t), newExecutor(t)
	src := &source{group: Group{Epoch: 1, Members: []Member{{URL: fast.url}, {URL: slow.url + "/slow"}}}}
	start := time.Now()
	m := startMonitor(t, testConfig(), src, log.NewNopLogger())
	waitFor(t, "the slow executor answered thrice", func() bool { return slow.finished.Load() >= 3 })
	m.Stop()
	elapsed := time.Since(start)
	if most := int64(elapsed/testConfig().ProbeInterval) + 1; fast.requests.Load() > most {
		t.Errorf("fast executor probed %d times in %s, at most %d allowed", fast.requests.Load(), elapsed, most)
	}
	if p := slow.peak.Load(); p != 1 {
		t.Errorf("%d probes at once for the slow executor", p)
	}
}

// A hanging executor holds one slot until its probe gives up; the others
// keep being probed meanwhile.
func TestMonitorHangingExecutorDelaysNoOne(t *testing.T) {
	hung := newExecutor(t)
	hung.hang.Store(true)
	src := &source{group: Group{Epoch: 1, Members: []Member{{URL: hung.url}}}}
	var fast []*executor
	for range 3 {
		e := newExecutor(t)
		fast = append(fast, e)
		src.group.Members = append(src.group.Members, Member{URL: e.url})
	}
	cfg := testConfig()
	// The hung probe holds one of two slots for 10 intervals.
	cfg.MaxConcurrency, cfg.ProbeInterval, cfg.ProbeTimeout, cfg.VerdictTTL = 2, 500*time.Millisecond, 5*time.Second, 5*time.Second
	m := startMonitor(t, cfg, src, log.NewNopLogger())
	waitFor(t, "the hung executor is probed", func() bool { return hung.requests.Load() == 1 })
	waitFor(t, "the others are probed twice more", func() bool {
		for _, e := range fast {
			if e.requests.Load() < 3 {
				return false
			}
		}
		return true
	})
	m.mu.RLock()
	defer m.mu.RUnlock()
	if hung.requests.Load() != 1 || !m.sched.targets[0].inFlight {
		t.Fatal("the hung probe ended before the others were probed again")
	}
}

// Stop cancels the probes in flight and waits for them; a cancelled probe
// is not a miss.
func TestMonitorStopWaitsForProbes(t *testing.T) {
	hung := newExecutor(t)
	hung.hang.Store(true)
	src := &source{group: Group{Epoch: 1, Members: []Member{{URL: hung.url}}}}
	cfg := testConfig()
	cfg.ProbeTimeout = time.Second
	m := startMonitor(t, cfg, src, log.NewNopLogger())
	waitFor(t, "the probe is in flight", func() bool { return hung.requests.Load() == 1 })
	m.Stop()
	m.mu.RLock()
	defer m.mu.RUnlock()
	if m.inFlight != 0 || m.sched.targets[0].inFlight {
		t.Fatal("Stop returned with a probe in flight")
	}
	if m.sched.targets[0].set {
		t.Fatal("the cancelled probe was recorded as a verdict")
	}
}

// An epoch change: snapshots for the old epoch are refused at once; an
// executor still in the group keeps its verdict (no unknown gap), a new
// one is probed within the interval; the coverage line is logged once per
// epoch.
func TestMonitorEpochChange(t *testing.T) {
	x, y := newExecutor(t), newExecutor(t)
	src := &source{group: Group{Epoch: 1, Members: []Member{{Address: "x", URL: x.url}, {Address: "y", URL: y.url}}}}
	var logs syncBuffer
	m := startMonitor(t, testConfig(), src, log.NewLogger(&logs, log.LevelOption(0)))
	waitFor(t, "epoch 1 is ok", func() bool { return allVerdicts(m, 1, 2, verdict.OK) })
	waitFor(t, "epoch 1's coverage line", func() bool { return logs.count(coverageLine) == 1 })
	src.set(Group{Epoch: 2, Members: []Member{{Address: "y", URL: y.url}, {Address: "z", URL: deadURL(t)}}})
	var first []verdict.Verdict
	waitFor(t, "epoch 2 is watched", func() bool {
		var err error
		first, err = m.Snapshot(2, 2)
		return err == nil
	})
	if first[0] != verdict.OK {
		t.Errorf("the executor kept from epoch 1 lost its verdict: %v", first)
	}
	if _, err := m.Snapshot(1, 2); err == nil {
		t.Error("a snapshot for the old epoch")
	}
	waitFor(t, "the new executor is probed", func() bool {
		vs, err := m.Snapshot(2, 2)
		return err == nil && vs[1] == verdict.Miss
	})
	waitFor(t, "epoch 2's coverage line", func() bool { return logs.count(coverageLine) == 2 })
	if x.requests.Load() == 0 {
		t.Fatal("x never probed")
	}
	before := x.requests.Load()
	time.Sleep(3 * testConfig().ProbeInterval)
	if x.requests.Load() > before+1 { // one may have been in flight
		t.Error("an executor that left the group is still probed")
	}
	if n := logs.count(coverageLine); n != 2 {
		t.Errorf("%d coverage lines for two epochs", n)
	}
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}
func (s *syncBuffer) count(sub string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.Count(s.b.String(), sub)
}
