package e2e_test

import (
	"strings"
	"testing"
	"time"

	ln "github.com/inferenced/inferenced/tests/internal/localnet"
)

// Scenario 3, degraded executor: its health endpoint answers, but 40% of
// its inferences fail. It is excluded on traffic misses; passing health
// checks (attested oks in every block) do not restore it, nor does PROBE
// while its probe inference fails; once inferences succeed again, the
// probe inference finishing does.
func TestDegradedExecutorNeedsARealProbe(t *testing.T) {
	n := start(t, 2500, "NUM_VALIDATORS=4", "NUM_EXECUTORS=4", "EXPIRATION_BLOCKS=3", "BLOCK_TIME=500ms",
		"EPOCH_LENGTH=1000", "CB_INITIAL_COOLDOWN=8", "CB_MAX_COOLDOWN=64", "DOWNTIME_H_THRESHOLD=50")
	bad := n.KeyAddress("exec1")
	load := n.StartLoad(4, "degraded", 8*time.Minute)
	n.WaitHeight(n.Height()+4, time.Minute)

	failAt := n.Height()
	n.Control(1, "/control/fail?pct=40")
	first := n.WaitHealth(bad, "exclusion on traffic misses", 3*time.Minute, func(h ln.HealthJSON) bool {
		return h.State == "HEALTH_STATE_EXCLUDED"
	})
	E1 := ln.Atoi(t, first.ExcludedAt)
	// Every inference now fails, so the probe does too; health checks pass.
	n.Control(1, "/control/fail?pct=100")
	second := n.WaitHealth(bad, "re-exclusion after a failed probe", 3*time.Minute, func(h ln.HealthJSON) bool {
		return h.State == "HEALTH_STATE_EXCLUDED" && h.Exclusions == 2
	})
	E2 := ln.Atoi(t, second.ExcludedAt)
	n.Control(1, "/control/fail?pct=0")
	back := n.WaitHealth(bad, "recovery", 3*time.Minute, func(h ln.HealthJSON) bool {
		return h.State == "HEALTH_STATE_HEALTHY" && ln.Atoi(t, h.SinceHeight) > E2
	})
	load.Stop()

	var path []string
	restoredEarly := false
	for h := E1; h <= ln.Atoi(t, back.SinceHeight); h++ {
		for _, ev := range n.TransitionEvents(h, bad) {
			path = append(path, ev["height"]+" "+strings.TrimPrefix(ev["to"], "HEALTH_STATE_")+" ("+
				strings.TrimPrefix(ev["reason"], "HEALTH_REASON_")+", "+strings.TrimPrefix(ev["kind"], "SAMPLE_KIND_")+")")
			if ev["to"] == "HEALTH_STATE_HEALTHY" && h < ln.Atoi(t, back.SinceHeight) {
				restoredEarly = true
			}
		}
	}
	attestedOK := 0
	for h := E1 + 1; h <= E2; h++ {
		if strings.HasPrefix(n.BundleLine(h, bad), "sample ok") {
			attestedOK++
		}
	}
	first0 := n.TransitionEvent(E1, bad)
	t.Logf("exec1 %s fails 40%% of inferences from block %d; health endpoint up throughout", bad, failAt)
	t.Logf("  EXCLUDED at %d on %s evidence (%s of %s traffic samples missed): +%d blocks", E1, first0["kind"],
		first0["misses"], first0["samples"], E1-failAt)
	t.Logf("  attested ok samples while excluded or probing, blocks %d..%d: %d (none restored it)", E1+1, E2, attestedOK)
	t.Logf("  transitions: %s", strings.Join(path, " → "))
	t.Logf("  HEALTHY at %s by %s", back.SinceHeight, back.Reason)

	if first0["kind"] != "SAMPLE_KIND_TRAFFIC" {
		t.Errorf("first exclusion on %s evidence, want traffic", first0["kind"])
	}
	if restoredEarly {
		t.Errorf("restored before its probe inference succeeded: %v", path)
	}
	if attestedOK == 0 {
		t.Errorf("no attested ok sample while it was out: the health checks should pass")
	}
	if back.Reason != "HEALTH_REASON_PROBE_SUCCEEDED" {
		t.Errorf("restored by %s, want the probe inference", back.Reason)
	}
}
