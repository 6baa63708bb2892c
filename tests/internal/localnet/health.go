package localnet

import (
	"encoding/json"
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
	// Evidence is the kind of the last exclusion's samples (Attested,
	// Traffic, Service); the service window and the scope of a scoped
	// traffic trip (agents refused until ScopedUntil).
	Evidence       string   `json:"evidence"`
	ServiceSamples int      `json:"service_samples"`
	ServiceMisses  int      `json:"service_misses"`
	ScopedAgents   []string `json:"scoped_agents"`
	ScopedUntil    string   `json:"scoped_until"`
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
	return n.Events(height, healthChanged)
}

// abciEvent is an ABCI event as CometBFT's JSON (block results, a
// transaction's result) writes it.
type abciEvent struct {
	Type       string `json:"type"`
	Attributes []struct {
		Key   string `json:"key"`
		Value string `json:"value"`
	} `json:"attributes"`
}

// Events returns the attributes of every event of type typ (a proto
// message name: ScopedEvent, ProbeStartedEvent) in the results of block
// height, in emission order. Values are unquoted; a list stays JSON
// (ListAttr reads it).
func (n *Net) Events(height int64, typ string) []map[string]string {
	n.t.Helper()
	var res struct {
		Result struct {
			Events []abciEvent `json:"finalize_block_events"`
		} `json:"result"`
	}
	// Node 0 may report a height before its results are stored: retry
	// for a few seconds.
	url := fmt.Sprintf("%s/block_results?height=%d", n.RPC(0), height)
	err := n.GetJSON(url, &res)
	for deadline := time.Now().Add(5 * time.Second); err != nil && time.Now().Before(deadline); {
		time.Sleep(200 * time.Millisecond)
		err = n.GetJSON(url, &res)
	}
	if err != nil {
		n.t.Fatalf("block results: %v", err)
	}
	var out []map[string]string
	for _, ev := range res.Result.Events {
		if ev.Type != typ {
			continue
		}
		attrs := map[string]string{}
		for _, a := range ev.Attributes {
			if strings.HasPrefix(a.Value, "[") {
				attrs[a.Key] = a.Value
			} else {
				attrs[a.Key] = strings.Trim(a.Value, `"`)
			}
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

// ListAttr reads an event attribute holding a list of strings (JSON, as
// the typed events write a repeated field); "" is an empty list.
func ListAttr(v string) ([]string, error) {
	if v == "" {
		return nil, nil
	}
	var out []string
	err := json.Unmarshal([]byte(v), &out)
	return out, err
}
