package main

import (
	"fmt"
	"slices"
	"testing"
	"time"
)

func TestFailPct(t *testing.T) {
	_, ts := newTest(t, Config{})
	body := inferenceBody("inf", testModel, "p")
	mustDo(t, "POST", ts.URL+"/control/fail?pct=100", "", 200)
	for range 5 {
		mustDo(t, "POST", ts.URL+"/v1/inference", body, 503)
	}
	// Failures are injected inference failures only: health stays ok.
	mustDo(t, "GET", ts.URL+"/health", "", 200)
	if s := state(t, ts); s.FailPct != 100 {
		t.Fatalf("fail_pct %d, want 100", s.FailPct)
	}
	mustDo(t, "POST", ts.URL+"/control/fail?pct=0", "", 200)
	for range 5 {
		mustDo(t, "POST", ts.URL+"/v1/inference", body, 200)
	}
	c := state(t, ts).Counters
	if c.InferencesFailed != 5 || c.InferencesServed != 5 || c.HealthServed != 1 {
		t.Fatalf("counters %+v", c)
	}
}

// failSequence returns the status codes of n inferences at pct on a fresh
// executor seeded with seed.
func failSequence(t *testing.T, seed uint64, pct, n int) []int {
	t.Helper()
	_, ts := newTest(t, Config{Seed: seed, FailPct: pct})
	c := client(2 * time.Second)
	var codes []int
	for i := range n {
		code, _, err := do(c, "POST", ts.URL+"/v1/inference",
			inferenceBody(fmt.Sprint("inf-", i), testModel, "p"))
		if err != nil {
			t.Fatalf("inference %d: %v", i, err)
		}
		codes = append(codes, code)
	}
	return codes
}

func TestFailPctDeterministic(t *testing.T) {
	const n = 40
	a := failSequence(t, 42, 50, n)
	b := failSequence(t, 42, 50, n)
	if !slices.Equal(a, b) {
		t.Fatalf("same seed, different outcomes:\n%v\n%v", a, b)
	}
	if !slices.Contains(a, 200) || !slices.Contains(a, 503) {
		t.Fatalf("pct 50 gave a one-sided sequence: %v", a)
	}
	if c := failSequence(t, 7, 50, n); slices.Equal(a, c) {
		t.Fatalf("seeds 42 and 7 gave the same %d outcomes", n)
	}
}

func TestCounters(t *testing.T) {
	_, ts := newTest(t, Config{})
	url := ts.URL
	body := inferenceBody("inf", testModel, "p")
	mustDo(t, "GET", url+"/health", "", 200)
	mustDo(t, "GET", url+"/health", "", 200)
	mustDo(t, "POST", url+"/v1/inference", body, 200)
	mustDo(t, "POST", url+"/v1/inference", "{", 400)
	mustDo(t, "POST", url+"/control/fail?pct=100", "", 200)
	mustDo(t, "POST", url+"/v1/inference", body, 503)
	mustDo(t, "POST", url+"/control/dark?mode=refuse", "", 200)
	for range 3 {
		if _, _, err := do(client(2*time.Second), "GET", url+"/health", ""); err == nil {
			t.Fatal("refusing executor answered")
		}
	}
	mustDo(t, "POST", url+"/control/dark?mode=hang", "", 200)
	if _, _, err := do(client(50*time.Millisecond), "GET", url+"/health", ""); err == nil {
		t.Fatal("hanging executor answered")
	}
	// "inf" is not a load driver id: both valid inferences count as canaries.
	want := Counters{HealthServed: 2, InferencesServed: 1, InferencesFailed: 1,
		RequestsRefused: 3, RequestsHung: 1, BadRequests: 1, CanariesSeen: 2}
	if got := state(t, ts).Counters; got != want {
		t.Fatalf("counters %+v, want %+v", got, want)
	}
}
