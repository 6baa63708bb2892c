package localnet

import (
	"fmt"
	"strings"
	"time"
)

// HealthJSON is an executor's breaker state as the REST server reports it.
type HealthJSON struct {
	Address        string `json:"address"`
	State          string `json:"state"`
	Reason         string `json:"reason"`
	SinceHeight    string `json:"since_height"`
	ExcludedAt     string `json:"excluded_at"`
	EligibleHeight string `json:"eligible_height"`
	CooldownBlocks string `json:"cooldown_blocks"`
	TrafficSamples int    `json:"traffic_samples"`
	TrafficMisses  int    `json:"traffic_misses"`
	Exclusions     int    `json:"exclusions"`
	ProbeID        string `json:"probe_inference_id"`
	HeldMisses     int    `json:"held_misses"`
}

// Health reads an executor's breaker state over REST (node 0).
func (n *Net) Health(addr string) (HealthJSON, error) { return n.HealthOn(0, addr) }

// HealthOn reads an executor's breaker state on validator i's REST server.
func (n *Net) HealthOn(i int, addr string) (HealthJSON, error) { return n.HealthAt(i, addr, 0) }

// HealthAt reads an executor's breaker state as of block height (0: the
// latest) on validator i's REST server.
func (n *Net) HealthAt(i int, addr string, height int64) (HealthJSON, error) {
	var res struct {
		Health HealthJSON `json:"health"`
	}
	err := getJSONAt(n.REST(i)+"/inferenced/inference/v1/executor_health/"+addr, height, &res)
	return res.Health, err
}

// WaitHealth polls an executor's breaker state on node 0 until ok accepts
// it and returns it; the test fails after timeout, saying what it awaited.
func (n *Net) WaitHealth(addr, what string, timeout time.Duration, ok func(HealthJSON) bool) HealthJSON {
	n.t.Helper()
	h, found := n.pollHealth(addr, timeout, ok, nil)
	if !found {
		n.t.Fatalf("%s: not within %s; last state %+v", what, timeout, h)
	}
	return h
}

// pollHealth polls addr's breaker state on node 0 every 100 ms until ok
// accepts it (true) or timeout passes (false, with the last state read),
// showing every reading to seen, if not nil.
func (n *Net) pollHealth(addr string, timeout time.Duration, ok func(HealthJSON) bool, seen func(HealthJSON)) (HealthJSON, bool) {
	var last HealthJSON
	for deadline := time.Now().Add(timeout); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		h, err := n.Health(addr)
		if err != nil {
			continue
		}
		last = h
		if seen != nil {
			seen(h)
		}
		if ok(h) {
			return h, true
		}
	}
	return last, false
}

// Excluded lists the executors the breaker does not hold HEALTHY, read on
// validator i's REST server.
func (n *Net) Excluded(i int) ([]HealthJSON, error) { return n.ExcludedAt(i, 0) }

// ExcludedAt is Excluded as of block height (0: the latest).
func (n *Net) ExcludedAt(i int, height int64) ([]HealthJSON, error) {
	var res struct {
		Executors []HealthJSON `json:"executors"`
	}
	err := getJSONAt(n.REST(i)+"/inferenced/inference/v1/excluded_executors", height, &res)
	return res.Executors, err
}

// TransitionEvent returns the attributes of the first breaker transition
// event for executor in the results of block height, or nil.
func (n *Net) TransitionEvent(height int64, executor string) map[string]string {
	n.t.Helper()
	if evs := n.TransitionEvents(height, executor); len(evs) > 0 {
		return evs[0]
	}
	return nil
}

// TransitionEvents returns the attributes of every breaker transition event
// for executor in the results of block height, in emission order.
func (n *Net) TransitionEvents(height int64, executor string) []map[string]string {
	n.t.Helper()
	var out []map[string]string
	for _, attrs := range n.AllTransitionEvents(height) {
		if attrs["executor"] == executor {
			out = append(out, attrs)
		}
	}
	return out
}

// AllTransitionEvents returns the attributes of every breaker transition
// event in the results of block height, in emission order.
func (n *Net) AllTransitionEvents(height int64) []map[string]string {
	n.t.Helper()
	var res struct {
		Result struct {
			Events []struct {
				Type       string `json:"type"`
				Attributes []struct {
					Key   string `json:"key"`
					Value string `json:"value"`
				} `json:"attributes"`
			} `json:"finalize_block_events"`
		} `json:"result"`
	}
	if err := n.GetJSON(fmt.Sprintf("%s/block_results?height=%d", n.RPC(0), height), &res); err != nil {
		n.t.Fatalf("block results: %v", err)
	}
	var out []map[string]string
	for _, ev := range res.Result.Events {
		if ev.Type != healthChanged {
			continue
		}
		attrs := map[string]string{}
		for _, a := range ev.Attributes {
			attrs[a.Key] = strings.Trim(a.Value, `"`)
		}
		out = append(out, attrs)
	}
	return out
}

// SawProbe reports whether executor was promoted to PROBE in a block of
// (from, to].
func SawProbe(n *Net, executor string, from, to int64) bool {
	for h := from + 1; h <= to; h++ {
		for _, e := range n.TransitionEvents(h, executor) {
			if e["to"] == Probe {
				return true
			}
		}
	}
	return false
}
