package main

import (
	"bytes"
	"encoding/json"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

const testModel = "llama-7b"

// newTest starts a fake executor on an httptest server. Cleanup releases
// held requests before closing, so a failing test cannot hang.
func newTest(t *testing.T, cfg Config) (*Server, *httptest.Server) {
	t.Helper()
	if cfg.Model == "" {
		cfg.Model = testModel
	}
	if cfg.Name == "" {
		cfg.Name = t.Name()
	}
	srv, err := NewServer(cfg, log.New(io.Discard, "", 0))
	if err != nil {
		t.Fatalf("NewServer: %v", err)
	}
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(func() {
		srv.State().Stop()
		ts.Close()
	})
	return srv, ts
}

// client returns an HTTP client with the given timeout and no connection
// reuse, so a dropped connection is never retried transparently.
func client(timeout time.Duration) *http.Client {
	return &http.Client{
		Timeout:   timeout,
		Transport: &http.Transport{DisableKeepAlives: true},
	}
}

func inferenceBody(id, model, prompt string) string {
	b, _ := json.Marshal(InferenceRequest{InferenceID: id, Model: model, Prompt: prompt})
	return string(b)
}

// do sends a request and returns status and body; err is a transport error.
func do(c *http.Client, method, url, body string) (int, []byte, error) {
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, err
}

// mustDo is do that fails the test on a transport error or unexpected status.
func mustDo(t *testing.T, method, url, body string, want int) []byte {
	t.Helper()
	code, b, err := do(client(2*time.Second), method, url, body)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	if code != want {
		t.Fatalf("%s %s: status %d, want %d (body %s)", method, url, code, want, bytes.TrimSpace(b))
	}
	return b
}

func state(t *testing.T, ts *httptest.Server) Snapshot { t.Helper(); return stateAt(t, ts.URL) }

// stateAt reads GET /control/state of the executor at url.
func stateAt(t *testing.T, url string) Snapshot {
	t.Helper()
	var s Snapshot
	if err := json.Unmarshal(mustDo(t, "GET", url+"/control/state", "", 200), &s); err != nil {
		t.Fatalf("decode state: %v", err)
	}
	return s
}

// waitFor polls cond every 5ms for at most 2s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
