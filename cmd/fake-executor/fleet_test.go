package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// newTestFleet serves a fleet of size on loopback ports of the kernel's
// choosing and returns it with each executor's base URL. Cleanup releases
// held requests and closes every server.
func newTestFleet(t *testing.T, size int, base Config) (*Fleet, []string) {
	t.Helper()
	if base.Model == "" {
		base.Model = testModel
	}
	if base.Name == "" {
		base.Name = "exec"
	}
	quiet := log.New(io.Discard, "", 0)
	f, err := NewFleet(base, size, func(string) *log.Logger { return quiet })
	if err != nil {
		t.Fatalf("NewFleet: %v", err)
	}
	lns := make([]net.Listener, size)
	urls := make([]string, size)
	for j := range lns {
		if lns[j], err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
			t.Fatal(err)
		}
		urls[j] = "http://" + lns[j].Addr().String()
	}
	f.Serve(lns, quiet)
	t.Cleanup(func() {
		for j := range size {
			f.Executor(j).State().Stop()
		}
		f.Close()
	})
	return f, urls
}

func fleetState(t *testing.T, url string) FleetState {
	t.Helper()
	var s FleetState
	if err := json.Unmarshal(mustDo(t, "GET", url+"/control/fleet", "", 200), &s); err != nil {
		t.Fatalf("decode fleet state: %v", err)
	}
	return s
}

// health classifies one GET /health: "ok", "refused" (a connection error
// that is not the client's timeout) or "hung" (the client's timeout). A
// hung executor never answers, so the timeout only has to outlast a
// healthy answer on a loaded machine: at 300 ms, 2 of 980 healthy
// executors of TestFleetOfAThousand read as hung while the whole unit
// suite ran on 2 cores.
func health(url string) string {
	code, _, err := do(client(2*time.Second), "GET", url+"/health", "")
	var ne net.Error
	switch {
	case err == nil && code == 200:
		return "ok"
	case errors.As(err, &ne) && ne.Timeout():
		return "hung"
	case err != nil:
		return "refused"
	}
	return fmt.Sprint(code)
}

func TestFleetNamesSeedsAndOwnControls(t *testing.T) {
	f, urls := newTestFleet(t, 3, Config{Seed: 40, FailPct: 50})
	for j, url := range urls {
		s := stateAt(t, url)
		if want := fmt.Sprintf("exec%d", j); s.Name != want || s.Seed != uint64(40+j) {
			t.Errorf("executor %d: name %q seed %d, want %q seed %d", j, s.Name, s.Seed, want, 40+j)
		}
	}
	// Executor 1's own control darkens executor 1 only.
	mustDo(t, "POST", urls[1]+"/control/dark?mode=refuse", "", 200)
	got := []string{health(urls[0]), health(urls[1]), health(urls[2])}
	if strings.Join(got, " ") != "ok refused ok" {
		t.Fatalf("health after darkening executor 1 alone: %v", got)
	}
	if m, _ := f.Executor(1).State().Mode(); m != ModeRefuse {
		t.Fatalf("executor 1 mode %s", m)
	}
}

// The bulk control switches 10 executors to refuse and 10 to hang in one
// request, from any executor's port, even a dark one's; the others keep
// answering; one more request brings them all back, releasing the held
// requests.
func TestBulkDarkAndUp(t *testing.T) {
	f, urls := newTestFleet(t, 30, Config{Latency: time.Millisecond})
	body := `{"groups":[{"executors":"0-9","mode":"refuse"},{"executors":"10-14,15-19","mode":"hang"}]}`
	var sum FleetSummary
	if err := json.Unmarshal(mustDo(t, "POST", urls[25]+"/control/bulk", body, 200), &sum); err != nil {
		t.Fatal(err)
	}
	if sum.Size != 30 || sum.Modes[ModeRefuse] != 10 || sum.Modes[ModeHang] != 10 || sum.Modes[ModeUp] != 10 {
		t.Fatalf("summary %+v", sum)
	}
	want := func(j int) string {
		switch {
		case j < 10:
			return "refused"
		case j < 20:
			return "hung"
		}
		return "ok"
	}
	got := make([]string, len(urls))
	var wg sync.WaitGroup
	for j, url := range urls {
		wg.Add(1)
		go func() { defer wg.Done(); got[j] = health(url) }()
	}
	wg.Wait()
	for j := range urls {
		if got[j] != want(j) {
			t.Errorf("executor %d: %s, want %s", j, got[j], want(j))
		}
	}

	// A patient request held by executor 12 is served once the fleet is up.
	held := make(chan int, 1)
	go func() {
		code, _, _ := do(client(5*time.Second), "GET", urls[12]+"/health", "")
		held <- code
	}()
	waitFor(t, "the held request", func() bool { return f.Executor(12).State().Counters().RequestsHung >= 2 })
	mustDo(t, "POST", urls[3]+"/control/bulk", `{"groups":[{"executors":"0-19","mode":"up"}]}`, 200)
	if code := <-held; code != 200 {
		t.Fatalf("held request got %d after bulk up, want 200", code)
	}
	for j, url := range urls {
		if h := health(url); h != "ok" {
			t.Errorf("executor %d after bulk up: %s", j, h)
		}
	}
	if s := fleetState(t, urls[0]); s.Modes[ModeUp] != 30 || len(s.Executors) != 30 {
		t.Fatalf("fleet state after up: %+v", s.FleetSummary)
	}
}

func TestBulkFailPctAndFleetFilter(t *testing.T) {
	_, urls := newTestFleet(t, 8, Config{})
	mustDo(t, "POST", urls[0]+"/control/bulk", `{"groups":[{"executors":"2,4","fail_pct":100},{"executors":"5","mode":"hang","fail_pct":10}]}`, 200)
	s := fleetState(t, urls[7])
	if s.Failing != 3 {
		t.Fatalf("failing %d, want 3", s.Failing)
	}
	var filtered FleetState
	if err := json.Unmarshal(mustDo(t, "GET", urls[7]+"/control/fleet?executors=2-5", "", 200), &filtered); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range filtered.Executors {
		got = append(got, fmt.Sprintf("%d:%s:%s:%d", e.Index, e.Name, e.Mode, e.FailPct))
	}
	if want := "2:exec2:up:100 3:exec3:up:0 4:exec4:up:100 5:exec5:hang:10"; strings.Join(got, " ") != want {
		t.Fatalf("filtered fleet %q, want %q", strings.Join(got, " "), want)
	}
	body := inferenceBody("i", testModel, "p")
	mustDo(t, "POST", urls[2]+"/v1/inference", body, 503)
	mustDo(t, "POST", urls[3]+"/v1/inference", body, 200)
	mustDo(t, "GET", urls[2]+"/health", "", 200) // failures are inferences only
	mustDo(t, "GET", urls[7]+"/control/fleet?executors=8", "", 400)
}

// Attack: a client of the control API sends malformed, oversized,
// out-of-range, backwards, overlapping or over-long bulk requests, or
// ranges spanning billions of executors to exhaust memory. Each is refused
// with 400 before any executor is touched.
func TestBulkRejectsChangeNothing(t *testing.T) {
	_, urls := newTestFleet(t, 10, Config{})
	many := make([]string, maxBulkGroups+1)
	for k := range many {
		many[k] = fmt.Sprintf(`{"executors":"%d","mode":"refuse"}`, k%10)
	}
	cases := []struct{ name, body string }{
		{"not JSON", `{"groups":`},
		{"unknown field", `{"groups":[{"executors":"0","mode":"refuse"}],"all":true}`},
		{"unknown group field", `{"groups":[{"executors":"0","mode":"refuse","why":1}]}`},
		{"trailing data", `{"groups":[{"executors":"0","mode":"refuse"}]}{}`},
		{"no groups", `{"groups":[]}`},
		{"too many groups", `{"groups":[` + strings.Join(many, ",") + `]}`},
		{"bad mode", `{"groups":[{"executors":"0","mode":"sleep"}]}`},
		{"nothing to set", `{"groups":[{"executors":"0"}]}`},
		{"pct too high", `{"groups":[{"executors":"0","fail_pct":101}]}`},
		{"pct negative", `{"groups":[{"executors":"0","fail_pct":-1}]}`},
		{"out of range", `{"groups":[{"executors":"0-10","mode":"refuse"}]}`},
		{"billions", `{"groups":[{"executors":"0-999999999","mode":"refuse"}]}`},
		{"backwards", `{"groups":[{"executors":"5-2","mode":"refuse"}]}`},
		{"negative", `{"groups":[{"executors":"-1","mode":"refuse"}]}`},
		{"empty set", `{"groups":[{"executors":"","mode":"refuse"}]}`},
		{"overlap", `{"groups":[{"executors":"0-4","mode":"refuse"},{"executors":"4-6","mode":"hang"}]}`},
		{"valid then bad", `{"groups":[{"executors":"0-4","mode":"refuse"},{"executors":"x","mode":"hang"}]}`},
		{"oversized", `{"groups":[{"executors":"` + strings.Repeat("1,", maxBulkBodyBytes) + `1","mode":"refuse"}]}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			mustDo(t, "POST", urls[0]+"/control/bulk", tc.body, 400)
		})
	}
	if s := fleetState(t, urls[0]); s.Modes[ModeUp] != 10 || s.Failing != 0 {
		t.Fatalf("fleet changed by refused requests: %+v", s.FleetSummary)
	}
	mustDo(t, "GET", urls[0]+"/control/bulk", "", 405)
}

func TestParseIndexes(t *testing.T) {
	cases := []struct {
		spec string
		want string // formatIndexes of the result, or "error"
	}{
		{"0", "0"},
		{"0-9", "0-9"},
		{"3,1,2", "1-3"},
		{"0-4, 2-6 ,9", "0-6,9"},
		{"7-7", "7"},
		{"0,2,4", "0,2,4"},
		{"", "error"},
		{",", "error"},
		{"1,", "error"},
		{"a", "error"},
		{"+1", "error"},
		{"1-", "error"},
		{"-1", "error"},
		{"1-2-3", "error"},
		{"4-3", "error"},
		{"10", "error"},
		{"0-4294967296", "error"},
		{"0x1", "error"},
	}
	for _, tc := range cases {
		got, err := parseIndexes(tc.spec, 10)
		s := formatIndexes(got)
		if err != nil {
			s = "error"
		}
		if s != tc.want {
			t.Errorf("parseIndexes(%q) = %q (%v), want %q", tc.spec, s, err, tc.want)
		}
	}
	if _, err := parseIndexes(strings.Repeat("1,", maxIndexSpecBytes), 10); err == nil {
		t.Error("over-long spec accepted")
	}
}

// A fleet listens on one contiguous range; when a port in it is taken it
// fails whole, leaving nothing open.
func TestFleetListenRange(t *testing.T) {
	f, err := NewFleet(Config{Model: testModel, Name: "e"}, 3, func(string) *log.Logger { return log.New(io.Discard, "", 0) })
	if err != nil {
		t.Fatal(err)
	}
	// Hold a port whose lower neighbour is free. Below the ephemeral range
	// (32768 and up, shared with every outgoing connection on the machine)
	// and above the localnets' ports; each candidate is tried for real.
	var taken net.Listener
	var port int
	for p := 16001; p < 26000 && taken == nil; p += 7 {
		below, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p-1))
		if err != nil {
			continue
		}
		if l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p)); err == nil {
			taken, port = l, p
		}
		_ = below.Close()
	}
	if taken == nil {
		t.Fatal("no free pair of ports in 16000..26000")
	}
	defer func() { _ = taken.Close() }()
	if _, err := f.Listen("127.0.0.1", port-1); err == nil || !strings.Contains(err.Error(), "executor 1") {
		t.Fatalf("listened on %d..%d with %d taken: %v, want executor 1's error", port-1, port+1, port, err)
	}
	// The port below the taken one was opened, then closed again.
	ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port-1))
	if err != nil {
		t.Fatalf("port %d left open by the failed Listen: %v", port-1, err)
	}
	_ = ln.Close()
	for _, base := range []int{0, 65534} {
		if _, err := f.Listen("127.0.0.1", base); err == nil {
			t.Errorf("base port %d accepted for 3 executors", base)
		}
	}
	if _, err := NewFleet(Config{Model: testModel}, 0, nil); err == nil {
		t.Error("fleet of 0 accepted")
	}
	if _, err := NewFleet(Config{Model: testModel}, maxFleet+1, nil); err == nil {
		t.Error("fleet over the bound accepted")
	}
	for _, args := range [][]string{{"-count", "2", "-listen", "127.0.0.1:0"}, {"-count", "0", "-listen", "127.0.0.1:0"}} {
		if err := run(args); err == nil {
			t.Errorf("run %v accepted", args)
		}
	}
}

// A thousand executors in one process: each costs one accept goroutine
// while idle, every one answers, and a bulk change of 20 reaches exactly
// those 20.
func TestFleetOfAThousand(t *testing.T) {
	const size = 1000
	before := runtime.NumGoroutine()
	_, urls := newTestFleet(t, size, Config{})
	if g := runtime.NumGoroutine() - before; g > size+5 {
		t.Errorf("%d goroutines for %d idle executors, want about one each", g, size)
	}
	mustDo(t, "POST", urls[999]+"/control/bulk",
		`{"groups":[{"executors":"100-109","mode":"refuse"},{"executors":"500-509","mode":"hang"}]}`, 200)
	results := make([]string, size)
	work := make(chan int)
	var wg sync.WaitGroup
	for range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range work {
				results[j] = health(urls[j])
			}
		}()
	}
	for j := range size {
		work <- j
	}
	close(work)
	wg.Wait()
	counts := map[string]int{}
	for j, r := range results {
		counts[r]++
		dark := (j >= 100 && j < 110) || (j >= 500 && j < 510)
		if dark == (r == "ok") {
			t.Errorf("executor %d: %s", j, r)
		}
	}
	if counts["ok"] != 980 || counts["refused"] != 10 || counts["hung"] != 10 {
		t.Fatalf("health of the fleet: %v", counts)
	}
}

// Shutdown of a fleet releases held requests on every executor.
func TestFleetShutdownReleasesHangs(t *testing.T) {
	f, urls := newTestFleet(t, 4, Config{})
	mustDo(t, "POST", urls[0]+"/control/bulk", `{"groups":[{"executors":"0-3","mode":"hang"}]}`, 200)
	codes := make(chan int, 4)
	for _, url := range urls {
		go func() {
			code, _, _ := do(client(5*time.Second), "GET", url+"/health", "")
			codes <- code
		}()
	}
	waitFor(t, "4 held requests", func() bool {
		n := uint64(0)
		for j := range 4 {
			n += f.Executor(j).State().Counters().RequestsHung
		}
		return n == 4
	})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	if err := f.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	for range 4 {
		if code := <-codes; code != 503 {
			t.Fatalf("held request got %d on shutdown, want 503", code)
		}
	}
}
