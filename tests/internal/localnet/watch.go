package localnet

import (
	"fmt"
	"time"
)

// WaitHealth polls an executor's breaker state on node 0 until ok accepts
// it and returns it; the test fails after timeout, saying what it awaited.
func (n *Net) WaitHealth(addr, what string, timeout time.Duration, ok func(HealthJSON) bool) HealthJSON {
	n.t.Helper()
	var last HealthJSON
	for deadline := time.Now().Add(timeout); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		h, err := n.Health(addr)
		if err != nil {
			continue
		}
		last = h
		if ok(h) {
			return h
		}
	}
	n.t.Fatalf("%s: not within %s; last state %+v", what, timeout, last)
	return last
}

// Excluded lists the executors the breaker does not hold HEALTHY, read on
// validator i's REST server.
func (n *Net) Excluded(i int) ([]HealthJSON, error) { return n.ExcludedAt(i, 0) }

// ExcludedAt is Excluded as of block height (0: the latest).
func (n *Net) ExcludedAt(i int, height int64) ([]HealthJSON, error) {
	var res struct {
		Executors []HealthJSON `json:"executors"`
	}
	url := fmt.Sprintf("http://127.0.0.1:%d/inferenced/inference/v1/excluded_executors", 1317+100*i+n.Offset)
	err := getJSONAt(url, height, &res)
	return res.Executors, err
}

// Eventually retries read every 200 ms until it succeeds, and fails the
// test after timeout with read's last error: a node a block behind the
// others cannot yet answer for the latest height.
func (n *Net) Eventually(what string, timeout time.Duration, read func() error) {
	n.t.Helper()
	var err error
	for deadline := time.Now().Add(timeout); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if err = read(); err == nil {
			return
		}
	}
	n.t.Fatalf("%s: not within %s: %v", what, timeout, err)
}

// BlockTimes returns the average time between the blocks of (from, to]
// from their headers.
func (n *Net) BlockTimes(from, to int64) time.Duration {
	n.t.Helper()
	at := func(h int64) time.Time {
		b, err := n.block(0, h)
		if err != nil {
			n.t.Fatal(err)
		}
		return b.Header.Time
	}
	if to <= from {
		return 0
	}
	return at(to).Sub(at(from)) / time.Duration(to-from)
}
