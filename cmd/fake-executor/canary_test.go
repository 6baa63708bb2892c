package main

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"
)

// canaryID is an id shaped like the health monitor's canaries: 16 random
// bytes in hex (monitor/canary.go), here made from k.
func canaryID(k int) string { return fmt.Sprintf("%032x", 0x9e3779b97f4a7c15*uint64(k+1)) }

// organicID is an id shaped like the load driver's.
func organicID(k int) string { return fmt.Sprintf("lg1700000000-%d-%d", 100+k/10, k%10) }

func TestIsOrganicID(t *testing.T) {
	for id, want := range map[string]bool{
		"lg1700000000-12-3": true, "lg1-0-0": true, organicID(57): true,
		canaryID(0): false, "lg1700000000-12": false, "lg1700000000-12-3-4": false, "lg-12-3": false,
		"lg1700000000-12-": false, "lg1700000000--3": false, "xg1700000000-12-3": false, "lg17a-1-2": false,
		"inf": false, "": false, "lg": false,
	} {
		if got := isOrganicID(id); got != want {
			t.Errorf("%q: organic=%v, want %v", id, got, want)
		}
	}
}

// codes sends n inferences with ids id(k) and returns their statuses.
func codes(t *testing.T, url string, n int, id func(int) string) []int {
	t.Helper()
	c := client(2 * time.Second)
	out := make([]int, n)
	for k := range n {
		code, _, err := do(c, "POST", url+"/v1/inference", inferenceBody(id(k), testModel, "Can you explain the rules of chess?"))
		if err != nil {
			t.Fatalf("inference %d: %v", k, err)
		}
		out[k] = code
	}
	return out
}

func failures(codes []int) int {
	n := 0
	for _, c := range codes {
		if c == 503 {
			n++
		}
	}
	return n
}

// fail-pct fails canaries exactly as it fails clients' inferences: for a
// seed, canary-shaped and load-driver-shaped ids get the same sequence of
// outcomes, at the configured rate.
func TestFailPctFailsCanariesAndOrganicAlike(t *testing.T) {
	const n, pct = 400, 30
	_, a := newTest(t, Config{Seed: 9, FailPct: pct})
	_, b := newTest(t, Config{Seed: 9, FailPct: pct})
	canaries, organic := codes(t, a.URL, n, canaryID), codes(t, b.URL, n, organicID)
	if !slices.Equal(canaries, organic) {
		t.Fatal("canaries and organic inferences failed differently under the same seed")
	}
	if f := failures(canaries); f < n*pct/100-40 || f > n*pct/100+40 {
		t.Fatalf("%d of %d canaries failed at fail_pct %d", f, n, pct)
	}
	if c := state(t, a).Counters; c.CanariesSeen != n || c.CanariesSpared != 0 || state(t, b).Counters.CanariesSeen != 0 {
		t.Fatalf("counters %+v", c)
	}
}

// With spare_canaries an executor that recognises canaries (an id it
// cannot find on chain) serves every canary and still fails clients'
// inferences at fail_pct, with the same draws as without it: the attack
// canaries alone cannot see.
func TestSpareCanariesServesCanariesAndFailsOrganic(t *testing.T) {
	const n = 200
	mixed := func(k int) string {
		if k%2 == 0 {
			return organicID(k)
		}
		return canaryID(k)
	}
	_, plain := newTest(t, Config{Seed: 5, FailPct: 50})
	_, sparing := newTest(t, Config{Seed: 5, FailPct: 50, SpareCanaries: true})
	p, s := codes(t, plain.URL, n, mixed), codes(t, sparing.URL, n, mixed)
	spared := 0
	for k := range n {
		switch {
		case k%2 == 0 && s[k] != p[k]:
			t.Fatalf("organic inference %d: %d sparing canaries, %d without", k, s[k], p[k])
		case k%2 == 1 && s[k] != 200:
			t.Fatalf("canary %d answered %d while sparing", k, s[k])
		case k%2 == 1 && p[k] == 503:
			spared++
		}
	}
	if spared == 0 || failures(p) == 0 {
		t.Fatal("no failure drawn: the test proves nothing")
	}
	st := state(t, sparing)
	if !st.SpareCanaries || st.Counters.CanariesSpared != uint64(spared) || st.Counters.CanariesSeen != n/2 {
		t.Fatalf("state %+v, want %d spared", st, spared)
	}

	// The control turns it on and off; pct keeps its meaning.
	_, ts := newTest(t, Config{})
	mustDo(t, "POST", ts.URL+"/control/fail?pct=100&spare_canaries=true", "", 200)
	mustDo(t, "POST", ts.URL+"/v1/inference", inferenceBody(canaryID(1), testModel, "p"), 200)
	mustDo(t, "POST", ts.URL+"/v1/inference", inferenceBody(organicID(1), testModel, "p"), 503)
	mustDo(t, "POST", ts.URL+"/control/fail?spare_canaries=false", "", 200)
	mustDo(t, "POST", ts.URL+"/v1/inference", inferenceBody(canaryID(2), testModel, "p"), 503)
	if st := state(t, ts); st.FailPct != 100 || st.SpareCanaries || st.Counters.CanariesSpared != 1 {
		t.Fatalf("state %+v", st)
	}
}

// Bad control parameters are refused whole: nothing changes.
func TestControlFailRefusesBadParameters(t *testing.T) {
	_, ts := newTest(t, Config{FailPct: 7})
	for _, q := range []string{"", "?pct=x", "?pct=101", "?spare_canaries=yes", "?pct=5&spare_canaries=1", "?pct=500&spare_canaries=true"} {
		mustDo(t, "POST", ts.URL+"/control/fail"+q, "", 400)
	}
	if st := state(t, ts); st.FailPct != 7 || st.SpareCanaries {
		t.Fatalf("refused requests changed the state: %+v", st)
	}
}

// The bulk control sets spare_canaries on a set of executors, alone or
// with the other settings; the summary counts the executors sparing.
func TestBulkSpareCanaries(t *testing.T) {
	_, urls := newTestFleet(t, 6, Config{})
	body := `{"groups":[{"executors":"0-1","spare_canaries":true},{"executors":"2","fail_pct":100,"spare_canaries":true}]}`
	var sum FleetSummary
	if err := json.Unmarshal(mustDo(t, "POST", urls[5]+"/control/bulk", body, 200), &sum); err != nil {
		t.Fatal(err)
	}
	if sum.SparingCanaries != 3 || sum.Failing != 1 {
		t.Fatalf("summary %+v", sum)
	}
	mustDo(t, "POST", urls[2]+"/v1/inference", inferenceBody(canaryID(0), testModel, "p"), 200)
	mustDo(t, "POST", urls[2]+"/v1/inference", inferenceBody(organicID(0), testModel, "p"), 503)
	s := fleetState(t, urls[0])
	var got []bool
	for _, e := range s.Executors {
		got = append(got, e.SpareCanaries)
	}
	if !slices.Equal(got, []bool{true, true, true, false, false, false}) {
		t.Fatalf("spare_canaries per executor %v", got)
	}
	mustDo(t, "POST", urls[0]+"/control/bulk", `{"groups":[{"executors":"0-2","spare_canaries":false}]}`, 200)
	if s := fleetState(t, urls[0]); s.SparingCanaries != 0 {
		t.Fatalf("after turning it off: %+v", s.FleetSummary)
	}
	mustDo(t, "POST", urls[0]+"/control/bulk", `{"groups":[{"executors":"0","spare_canaries":"yes"}]}`, 400)
}
