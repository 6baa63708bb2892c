package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"log"
	"strings"
	"testing"
	"time"
)

func TestHealthOK(t *testing.T) {
	_, ts := newTest(t, Config{})
	b := mustDo(t, "GET", ts.URL+"/health", "", 200)
	if got := strings.TrimSpace(string(b)); got != `{"status":"ok"}` {
		t.Fatalf("body %s", got)
	}
	mustDo(t, "POST", ts.URL+"/health", "", 405)
	if c := state(t, ts).Counters.HealthServed; c != 1 {
		t.Fatalf("health_served %d, want 1", c)
	}
}

func TestInferenceOK(t *testing.T) {
	const latency = 30 * time.Millisecond
	_, ts := newTest(t, Config{Latency: latency})
	start := time.Now()
	b := mustDo(t, "POST", ts.URL+"/v1/inference", inferenceBody("inf-1", testModel, "hello"), 200)
	if el := time.Since(start); el < latency {
		t.Fatalf("answered after %s, before the %s latency", el, latency)
	}
	var r InferenceResponse
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatalf("decode: %v", err)
	}
	if r.InferenceID != "inf-1" || r.Response == "" {
		t.Fatalf("response %+v", r)
	}
	sum := sha256.Sum256([]byte(r.Response))
	if r.ResponseHash != hex.EncodeToString(sum[:]) {
		t.Fatalf("response_hash %s does not match sha256 of response", r.ResponseHash)
	}
	// Deterministic: the same request gives the same response.
	var r2 InferenceResponse
	_ = json.Unmarshal(mustDo(t, "POST", ts.URL+"/v1/inference", inferenceBody("inf-1", testModel, "hello"), 200), &r2)
	if r2 != r {
		t.Fatalf("same request, different answers: %+v vs %+v", r, r2)
	}
	if c := state(t, ts).Counters.InferencesServed; c != 2 {
		t.Fatalf("inferences_served %d, want 2", c)
	}
}

func TestInferenceRejects(t *testing.T) {
	_, ts := newTest(t, Config{Latency: time.Millisecond})
	big := inferenceBody("inf-big", testModel, strings.Repeat("x", maxBodyBytes))
	cases := []struct {
		name, method, body string
		want               int
	}{
		{"bad json", "POST", `{"inference_id":`, 400},
		{"not an object", "POST", `[1,2]`, 400},
		{"trailing garbage", "POST", inferenceBody("i", testModel, "p") + "x", 400},
		{"wrong model", "POST", inferenceBody("i", "gpt-9", "p"), 400},
		{"missing model", "POST", `{"inference_id":"i","prompt":"p"}`, 400},
		{"missing id", "POST", inferenceBody("", testModel, "p"), 400},
		{"oversized", "POST", big, 413},
		{"wrong method", "GET", "", 405},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			mustDo(t, tc.method, ts.URL+"/v1/inference", tc.body, tc.want)
		})
	}
	c := state(t, ts).Counters
	if c.BadRequests != 7 || c.InferencesServed != 0 || c.InferencesFailed != 0 {
		t.Fatalf("counters %+v, want 7 bad requests and nothing else", c)
	}
}

func TestControlBadParams(t *testing.T) {
	_, ts := newTest(t, Config{})
	mustDo(t, "POST", ts.URL+"/control/dark?mode=sleep", "", 400)
	for _, q := range []string{"", "?pct=", "?pct=abc", "?pct=-1", "?pct=101", "?pct=5.5"} {
		mustDo(t, "POST", ts.URL+"/control/fail"+q, "", 400)
	}
	mustDo(t, "GET", ts.URL+"/control/up", "", 405)
	s := state(t, ts)
	if s.Mode != ModeUp || s.FailPct != 0 || s.Model != testModel {
		t.Fatalf("state changed by bad requests: %+v", s)
	}
}

func TestNewServerValidates(t *testing.T) {
	for _, cfg := range []Config{
		{Model: ""},
		{Model: "m", Latency: -time.Second},
		{Model: "m", FailPct: 101},
		{Model: "m", FailPct: -1},
	} {
		if _, err := NewServer(cfg, log.Default()); err == nil {
			t.Errorf("NewServer(%+v) accepted", cfg)
		}
	}
	if err := run([]string{"-fail-pct", "150", "-listen", "127.0.0.1:0"}); err == nil {
		t.Error("run accepted -fail-pct 150")
	}
}

// TestListenRefusesNonLoopback (attack: a fleet listening on every
// interface lets anyone on the network take all its executors dark).
func TestListenRefusesNonLoopback(t *testing.T) {
	for _, host := range []string{"0.0.0.0", "", "10.0.0.1", "::", "example.com"} {
		if err := checkLoopback(host, false); err == nil {
			t.Errorf("listen host %q accepted", host)
		}
	}
	for _, host := range []string{"127.0.0.1", "127.0.0.2", "::1", "localhost"} {
		if err := checkLoopback(host, false); err != nil {
			t.Errorf("loopback %q refused: %v", host, err)
		}
	}
	if err := checkLoopback("0.0.0.0", true); err != nil {
		t.Errorf("-allow-non-loopback ignored: %v", err)
	}
	if err := run([]string{"-listen", "0.0.0.0:0"}); err == nil {
		t.Error("run listened on every interface")
	}
}

func TestLogsOneLinePerStateChange(t *testing.T) {
	var buf bytes.Buffer
	srv, err := NewServer(Config{Model: testModel}, log.New(&buf, "", 0))
	if err != nil {
		t.Fatal(err)
	}
	st := srv.State()
	st.SetMode(ModeHang)
	st.SetMode(ModeHang) // no change, no line
	st.SetMode(ModeUp)
	_ = st.SetFailPct(10)
	_ = st.SetFailPct(10) // no change, no line
	if n := strings.Count(buf.String(), "\n"); n != 3 {
		t.Fatalf("%d log lines, want 3:\n%s", n, buf.String())
	}
}
