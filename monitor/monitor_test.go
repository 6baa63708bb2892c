package monitor

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"cosmossdk.io/log/v2"

	"github.com/inferenced/inferenced/x/inference/verdict"
)

func testConfig() Config {
	c := DefaultConfig()
	c.ProbeInterval = 100 * time.Millisecond
	c.ProbeTimeout = 300 * time.Millisecond
	c.VerdictTTL = 2 * time.Second
	c.AllowPrivate = true // httptest listens on 127.0.0.1
	return c
}

func server(t *testing.T, h http.HandlerFunc) *httptest.Server {
	t.Helper()
	s := httptest.NewServer(h)
	t.Cleanup(s.Close)
	return s
}

func deadURL(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	return "http://" + addr
}

func TestProbeOutcomes(t *testing.T) {
	var redirectedHit atomic.Bool
	target := server(t, func(w http.ResponseWriter, r *http.Request) { redirectedHit.Store(true) })
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	cases := []struct {
		name string
		url  string
		ok   bool
	}{
		{"200 is ok", server(t, func(w http.ResponseWriter, r *http.Request) {
			if r.Method != http.MethodGet || r.URL.Path != "/health" {
				w.WriteHeader(http.StatusBadRequest)
			}
		}).URL + "/v1", true},
		{"500 is a miss", server(t, func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(500) }).URL, false},
		{"a redirect is a miss and is not followed", server(t, func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, target.URL+"/health", http.StatusFound)
		}).URL, false},
		{"a hanging executor is a miss within the timeout", server(t, func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-release:
			case <-r.Context().Done():
			}
		}).URL, false},
		{"a huge body is read only in part", server(t, func(w http.ResponseWriter, _ *http.Request) {
			chunk := strings.Repeat("x", 64<<10)
			for range 1024 { // 64 MiB if anyone read it all
				if _, err := w.Write([]byte(chunk)); err != nil {
					return
				}
			}
		}).URL, true},
		{"connection refused is a miss", deadURL(t), false},
		{"not a URL", "::nope", false},
	}
	p := newProber(testConfig())
	for _, c := range cases {
		start := time.Now()
		ok, err := p.probe(context.Background(), c.url)
		if ok != c.ok {
			t.Errorf("%s: ok=%v (%v), want %v", c.name, ok, err, c.ok)
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("%s: took %s, beyond the probe timeout", c.name, d)
		}
	}
	if redirectedHit.Load() {
		t.Error("the redirect was followed")
	}
}

// Attack: a participant registers an inference URL pointing at the
// validator's own network (loopback, private, link-local, or a name that
// resolves there). Without allow-private the probe is refused at dial time.
func TestAttackInternalTargetsRefusedUnlessAllowed(t *testing.T) {
	var hit atomic.Bool
	s := server(t, func(http.ResponseWriter, *http.Request) { hit.Store(true) })
	cfg := testConfig()
	cfg.AllowPrivate = false
	p := newProber(cfg)
	port := s.URL[strings.LastIndex(s.URL, ":"):]
	for _, u := range []string{s.URL, "http://localhost" + port} {
		ok, err := p.probe(context.Background(), u)
		if ok || !errors.Is(err, ErrForbiddenAddress) {
			t.Errorf("%s: ok=%v err=%v, want refused", u, ok, err)
		}
	}
	if hit.Load() {
		t.Fatal("an internal address was probed")
	}
	for addr, allowed := range map[string]bool{
		"10.1.2.3:80": false, "192.168.0.1:80": false, "172.16.5.5:80": false, "169.254.169.254:80": false,
		"[::1]:80": false, "[fe80::1]:80": false, "[fd00::1]:80": false, "0.0.0.0:80": false, "224.0.0.1:80": false,
		"[::ffff:127.0.0.1]:80": false, "8.8.8.8:443": true, "[2001:4860:4860::8888]:443": true,
		"100.100.100.200:80": false, "0.1.2.3:80": false, "198.18.0.1:80": false, "255.255.255.255:80": false,
		"[64:ff9b::a9fe:a9fe]:80": false, "[2002:a9fe:a9fe::1]:80": false, "[::10.0.0.1]:80": false,
		"[fec0::1]:80": false, "[64:ff9b::808:808]:80": true,
	} {
		if err := checkDialAddress(addr, false); (err == nil) != allowed {
			t.Errorf("%s: err=%v, want allowed=%v", addr, err, allowed)
		}
	}
	if err := checkDialAddress("0.0.0.0:80", true); err == nil {
		t.Error("the unspecified address is never a target")
	}
}

func TestMonitorSnapshotAndStaleness(t *testing.T) {
	ok := server(t, func(http.ResponseWriter, *http.Request) {})
	bad := server(t, func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(503) })
	hang := make(chan struct{})
	hanging := server(t, func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-hang:
		case <-r.Context().Done():
		}
	})
	t.Cleanup(func() { close(hang) })
	group := Group{Epoch: 4, Members: []Member{{URL: ok.URL}, {URL: bad.URL}, {URL: hanging.URL}, {URL: deadURL(t)}}}
	m, err := New(testConfig(), func(context.Context) (Group, error) { return group, nil }, log.NewNopLogger())
	if err != nil {
		t.Fatal(err)
	}
	m.Start()
	want := []verdict.Verdict{verdict.OK, verdict.Miss, verdict.Miss, verdict.Miss}
	var got []verdict.Verdict
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if got, err = m.Snapshot(4, 4); err == nil && equal(got, want) {
			break
		}
	}
	if !equal(got, want) {
		t.Fatalf("snapshot %v, want %v", got, want)
	}
	if _, err := m.Snapshot(5, 4); err == nil {
		t.Error("snapshot for another epoch")
	}
	if _, err := m.Snapshot(4, 3); err == nil {
		t.Error("snapshot for another group size")
	}
	stopped := make(chan struct{})
	go func() { m.Stop(); close(stopped) }()
	select {
	case <-stopped:
	case <-time.After(3 * time.Second):
		t.Fatal("Stop blocked on a hanging executor")
	}
	// Verdicts age out: once older than the TTL they are unknown.
	m.now = func() time.Time { return time.Now().Add(time.Minute) }
	stale, err := m.Snapshot(4, 4)
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range stale {
		if v != verdict.Unknown {
			t.Fatalf("verdict %d is %s after the TTL", i, v)
		}
	}
}

// With more executors than probe slots, every executor still gets its turn.
func TestMonitorProbesEveryExecutorWithFewSlots(t *testing.T) {
	ok := server(t, func(http.ResponseWriter, *http.Request) {})
	var members []Member
	for range 40 {
		members = append(members, Member{URL: ok.URL})
	}
	cfg := testConfig()
	cfg.MaxConcurrency = 4
	m, err := New(cfg, func(context.Context) (Group, error) { return Group{Epoch: 1, Members: members}, nil }, log.NewNopLogger())
	if err != nil {
		t.Fatal(err)
	}
	m.Start()
	defer m.Stop()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		vs, err := m.Snapshot(1, 40)
		if err != nil {
			continue // the first tick has not read the group yet
		}
		all := true
		for _, v := range vs {
			all = all && v == verdict.OK
		}
		if all {
			return
		}
	}
	vs, _ := m.Snapshot(1, 40)
	t.Fatalf("not every executor was probed: %v", vs)
}

func TestConfigValidate(t *testing.T) {
	if err := DefaultConfig().Validate(); err != nil {
		t.Fatal(err)
	}
	largest := DefaultConfig()
	largest.MaxConcurrency, largest.ProbeInterval, largest.VerdictTTL = maxConcurrency, time.Hour, time.Hour
	if err := largest.Validate(); err != nil {
		t.Fatalf("the largest allowed config is refused: %v", err)
	}
	bad := []func(*Config){
		func(c *Config) { c.ProbeInterval = time.Millisecond },
		func(c *Config) { c.ProbeTimeout = 0 },
		func(c *Config) { c.VerdictTTL = c.ProbeInterval / 2 },
		func(c *Config) { c.MaxConcurrency = 0 },
		func(c *Config) { c.MaxConcurrency = maxConcurrency + 1 },
		func(c *Config) { c.ProbeInterval, c.VerdictTTL = 2*time.Hour, 3*time.Hour },
		func(c *Config) { c.HealthPath = "health" },
		func(c *Config) { c.HealthPath = "/health?x=1" },
		func(c *Config) { c.CanaryInterval = 0 },
		func(c *Config) { c.CanaryInterval, c.CanaryTTL = 2*time.Hour, 100*time.Hour },
		func(c *Config) { c.CanarySuspectInterval = c.CanaryInterval + time.Second },
		func(c *Config) { c.CanarySuspectInterval = time.Millisecond },
		func(c *Config) { c.CanaryTimeout = -time.Second },
		func(c *Config) { c.CanaryTimeout = 10*c.CanaryInterval + 1 },
		func(c *Config) { c.CanaryWindow, c.CanaryMinSamples = 0, 0 },
		func(c *Config) { c.CanaryWindow = maxCanaryWindow + 1 },
		func(c *Config) { c.CanaryMinSamples = 0 },
		func(c *Config) { c.CanaryMinSamples = c.CanaryWindow + 1 },
		func(c *Config) { c.CanaryTTL = 4*c.CanaryInterval + c.CanaryTimeout - 1 },
		func(c *Config) { c.CanaryMaxConcurrency = 0 },
		func(c *Config) { c.CanaryMaxConcurrency = maxConcurrency + 1 },
	}
	for i, edit := range bad {
		c := DefaultConfig()
		edit(&c)
		if c.Validate() == nil {
			t.Errorf("case %d accepted: %+v", i, c)
		}
	}
}

func equal(a, b []verdict.Verdict) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
