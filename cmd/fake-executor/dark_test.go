package main

import (
	"context"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

func TestDarkRefuse(t *testing.T) {
	_, ts := newTest(t, Config{Latency: time.Millisecond})
	mustDo(t, "POST", ts.URL+"/control/dark?mode=refuse", "", 200)
	c := client(2 * time.Second)
	if code, _, err := do(c, "GET", ts.URL+"/health", ""); err == nil {
		t.Fatalf("GET /health while refusing: status %d, want a connection error", code)
	}
	body := inferenceBody("inf-1", testModel, "p")
	if code, _, err := do(c, "POST", ts.URL+"/v1/inference", body); err == nil {
		t.Fatalf("POST /v1/inference while refusing: status %d, want a connection error", code)
	}
	s := state(t, ts) // the control API still answers
	if s.Mode != ModeRefuse || s.Counters.RequestsRefused != 2 {
		t.Fatalf("state %+v, want mode refuse and 2 refused", s)
	}
	mustDo(t, "POST", ts.URL+"/control/up", "", 200)
	mustDo(t, "GET", ts.URL+"/health", "", 200)
	mustDo(t, "POST", ts.URL+"/v1/inference", body, 200)
}

func TestDarkHang(t *testing.T) {
	_, ts := newTest(t, Config{Latency: time.Millisecond})
	mustDo(t, "POST", ts.URL+"/control/dark?mode=hang", "", 200)

	_, _, err := do(client(200*time.Millisecond), "GET", ts.URL+"/health", "")
	var ne net.Error
	if !errors.As(err, &ne) || !ne.Timeout() {
		t.Fatalf("GET /health while hanging: err %v, want a client timeout", err)
	}

	// A patient client is released, and served, when the executor comes back.
	type result struct {
		code int
		err  error
	}
	done := make(chan result, 1)
	go func() {
		code, _, err := do(client(3*time.Second), "POST", ts.URL+"/v1/inference",
			inferenceBody("inf-held", testModel, "p"))
		done <- result{code, err}
	}()
	waitFor(t, "the inference to hang", func() bool { return state(t, ts).Counters.RequestsHung == 2 })
	select {
	case r := <-done:
		t.Fatalf("inference returned while hanging: %+v", r)
	case <-time.After(50 * time.Millisecond):
	}
	if s := state(t, ts); s.Mode != ModeHang {
		t.Fatalf("mode %s, want hang", s.Mode)
	}
	mustDo(t, "POST", ts.URL+"/control/up", "", 200)
	select {
	case r := <-done:
		if r.err != nil || r.code != 200 {
			t.Fatalf("released inference: %+v, want 200", r)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("inference not released by /control/up")
	}
	mustDo(t, "GET", ts.URL+"/health", "", 200)
	mustDo(t, "POST", ts.URL+"/v1/inference", inferenceBody("inf-2", testModel, "p"), 200)
}

// TestHangReleasedByClient checks that a held request returns once its client
// gives up: closing the server (which waits for active requests) completes.
func TestHangReleasedByClient(t *testing.T) {
	srv, err := NewServer(Config{Model: testModel}, log.New(io.Discard, "", 0))
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv.Handler()) // no release on cleanup
	srv.State().SetMode(ModeHang)
	c := client(100 * time.Millisecond)
	if _, _, err := do(c, "GET", ts.URL+"/health", ""); err == nil {
		t.Fatal("GET /health answered while hanging")
	}
	if _, _, err := do(c, "POST", ts.URL+"/v1/inference", inferenceBody("i", testModel, "p")); err == nil {
		t.Fatal("POST /v1/inference answered while hanging")
	}
	closed := make(chan struct{})
	go func() { ts.Close(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(2 * time.Second):
		srv.State().Stop() // unblock, then fail
		<-closed
		t.Fatal("held requests did not end with their clients")
	}
}

func TestHangBound(t *testing.T) {
	_, ts := newTest(t, Config{MaxHang: 100 * time.Millisecond})
	mustDo(t, "POST", ts.URL+"/control/dark?mode=hang", "", 200)
	start := time.Now()
	// The client would wait 30 s: an error that is not its own timeout means
	// the server let go at its bound. No upper bound on time: CI is noisy.
	code, _, err := do(client(30*time.Second), "GET", ts.URL+"/health", "")
	if err == nil {
		t.Fatalf("status %d after the hang bound, want a connection error", code)
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatalf("client timed out (%v): the hang bound did not release the request", err)
	}
	if el := time.Since(start); el < 100*time.Millisecond {
		t.Fatalf("released after %s, before the 100ms bound", el)
	}
}

func TestShutdownReleasesHang(t *testing.T) {
	srv, err := NewServer(Config{Model: testModel}, log.New(io.Discard, "", 0))
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := newHTTPServer(srv, srv.Handler(), log.New(io.Discard, "", 0))
	go func() { _ = hs.Serve(ln) }()
	t.Cleanup(func() { _ = hs.Close() })
	url := "http://" + ln.Addr().String()
	mustDo(t, "POST", url+"/control/dark?mode=hang", "", 200)

	codes := make(chan int, 1)
	go func() {
		code, _, _ := do(client(3*time.Second), "GET", url+"/health", "")
		codes <- code
	}()
	waitFor(t, "the request to hang", func() bool { return srv.State().Counters().RequestsHung == 1 })
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := hs.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	if code := <-codes; code != http.StatusServiceUnavailable {
		t.Fatalf("held request got %d on shutdown, want 503", code)
	}
}
