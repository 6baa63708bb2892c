package e2e_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	ln "github.com/inferenced/inferenced/tests/internal/localnet"
)

// Scenario 2, idle executor: vote extensions on from height 2, no
// traffic at all. An executor goes dark and the validators' attestations
// alone exclude it; it comes back, is promoted to PROBE after the cooldown
// and restored by the next attested ok. It prints the timeline in blocks,
// counted from the first block whose vote extensions could see the outage.
func TestIdleExecutorExcludedByAttestationAlone(t *testing.T) {
	cfg := ln.DefaultConfig()
	cfg.PortOffset = 1500
	cfg.VEEnableHeight = ln.Int64(2)
	n := start(t, cfg)
	dark := n.ExecutorAddr(1)
	n.WaitHeight(5, time.Minute)
	o := n.Outage(1).Dark().AwaitExclusion(0, 2*time.Minute).Up().AwaitRecovery(2 * time.Minute)
	darkAt, upAt, excluded, healthy := o.DarkAt, o.UpAt, o.Exclusion, o.Recovery
	E, H := o.ExcludedAt, o.HealthyAt
	// The outage began during block darkAt+1: the first extensions that can
	// see it are those of darkAt+1, applied in darkAt+2.
	firstSeen := darkAt + 1
	ev := n.TransitionEvent(E, dark)
	t.Logf("timeline (blocks), executor exec1 %s, no traffic:", dark)
	t.Logf("  %5d  goes dark (last committed block when its endpoint started refusing)", darkAt)
	t.Logf("  %5d  first block whose vote extensions could see it", firstSeen)
	for h := firstSeen + 1; h <= E; h++ {
		t.Logf("  %5d  bundle: %s", h, n.BundleLine(h, dark))
	}
	t.Logf("  %5d  EXCLUDED, reason %s, evidence %s (%s of the last %s attested samples missed): +%d blocks",
		E, excluded.Reason, ev["kind"], ev["misses"], ev["samples"], E-firstSeen)
	t.Logf("  %5d  endpoint back up", upAt)
	var path []string
	for _, e := range n.TransitionEvents(H, dark) {
		path = append(path, e["to"]+" ("+e["reason"]+")")
	}
	t.Logf("  %5d  %s: +%d blocks after exclusion (cooldown %s)", H, strings.Join(path, " → "), H-E, excluded.CooldownBlocks)

	// Attack: the bundle bytes of a block sent back through CheckTx.
	txs := n.BlockTxs(E)
	if len(txs) == 0 {
		t.Fatalf("block %d has no health bundle", E)
	}
	raw := txs[0]
	var checked struct {
		Result struct {
			Code uint32 `json:"code"`
			Log  string `json:"log"`
		} `json:"result"`
	}
	if err := n.GetJSON(fmt.Sprintf("%s/broadcast_tx_sync?tx=0x%x", n.RPC(0), raw), &checked); err != nil {
		t.Fatal(err)
	}
	if checked.Result.Code == 0 {
		t.Errorf("CheckTx accepted the health bundle bytes")
	}
	t.Logf("  bundle bytes through CheckTx: code %d (%s)", checked.Result.Code, checked.Result.Log)

	if ev["kind"] != ln.Attested {
		t.Errorf("excluded on %v, want attested evidence", ev)
	}
	if E-firstSeen > maxBlocksToExclusion {
		t.Errorf("excluded %d blocks after the first extensions that could see the outage, want <= %d",
			E-firstSeen, maxBlocksToExclusion)
	}
	if healthy.Reason != ln.AttestedOK && healthy.Reason != ln.ProbeSucceeded {
		t.Errorf("restored by %s", healthy.Reason)
	}
	// The way back goes through PROBE: promoted when the cooldown ends, then
	// restored by evidence, both visible as events (possibly in one block).
	if !o.ProbeSeen().SawProbe {
		t.Errorf("no transition to PROBE between blocks %d and %d", E, H)
	}
	if H < E+ln.Atoi(t, excluded.CooldownBlocks) {
		t.Errorf("restored at %d before the cooldown from %d ended", H, E)
	}
}
