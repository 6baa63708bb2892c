package e2e_test

import (
	"strings"
	"testing"
	"time"

	ln "github.com/inferenced/inferenced/tests/internal/localnet"
)

// maxRoutedToExclusion is the simulator's worst case at the degraded
// scenario's shape (4 executors, 4 requests a block, 3 agents, expiration
// 3, the default traffic rule), rounded up: over 400 simulated faults at
// 40% misses a median of 29 inferences, p90 56, p99 88, at most 109. Only
// about half of the misses find another agent's miss in flight to back
// them, so the tail is long (docs/simulation.md).
const maxRoutedToExclusion = 110

// Scenario 3, degraded executor: its health endpoint answers, but 40% of
// its inferences fail, whichever of the load driver's three agents sends
// them. It is excluded on traffic misses, corroborated by distinct agents
// (issue 10's scenario d), within maxRoutedToExclusion of its inferences;
// passing health checks (attested oks in every block) do not restore it,
// nor does PROBE
// while its probe inference fails; once inferences succeed again, the
// probe inference finishing does.
//
// This is the traffic path alone: no validator sends canaries here. With
// canaries the validators would see the 40% themselves and the executor
// would go out and come back on service evidence (scenario 11, (a)).
func TestDegradedExecutorNeedsARealProbe(t *testing.T) {
	cfg := ln.DefaultConfig()
	cfg.PortOffset = 2500
	cfg.ExpirationBlocks, cfg.SPRTThreshold = 3, 50
	cfg.Canary.Off = true
	n := start(t, cfg)
	bad := n.ExecutorAddr(1)
	load := n.StartLoad(4, "degraded", 8*time.Minute)
	n.WaitHeight(n.Height()+4, time.Minute)

	o := n.Outage(1).Fail(40).AwaitExclusion(0, 3*time.Minute)
	failAt, E1 := o.DarkAt, o.ExcludedAt
	// Every inference now fails, so the probe does too; health checks pass.
	o.Fail(100).AwaitExclusion(2, 3*time.Minute) // re-excluded after a failed probe
	E2 := o.ExcludedAt
	back := o.Fail(0).AwaitRecovery(3 * time.Minute).Recovery
	if err := load.Stop(); err != nil {
		t.Logf("load driver: %v", err) // figures below use what it recorded
	}

	routed := 0 // inferences routed to it from the fault to the exclusion
	agents := map[string]bool{}
	for _, ev := range load.Events() {
		if ev.Executor == bad && ev.Height >= failAt && ev.Height < E1 {
			routed++
			agents[ev.Agent] = true
		}
	}
	var path []string
	restoredEarly := false
	for h := E1; h <= ln.Atoi(t, back.SinceHeight); h++ {
		for _, ev := range n.TransitionEvents(h, bad) {
			path = append(path, ev["height"]+" "+ln.Short(ev["to"])+" ("+ln.Short(ev["reason"])+", "+ln.Short(ev["kind"])+")")
			if ev["to"] == ln.Healthy && h < ln.Atoi(t, back.SinceHeight) {
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
	t.Logf("  inferences routed to it from the fault to the exclusion: %d, by %d agents", routed, len(agents))
	t.Logf("  attested ok samples while excluded or probing, blocks %d..%d: %d (none restored it)", E1+1, E2, attestedOK)
	t.Logf("  transitions: %s", strings.Join(path, " → "))
	t.Logf("  HEALTHY at %s by %s", back.SinceHeight, back.Reason)

	if routed > maxRoutedToExclusion {
		t.Errorf("%d inferences routed before the exclusion, want at most %d", routed, maxRoutedToExclusion)
	}
	if first0["kind"] != ln.Traffic {
		t.Errorf("first exclusion on %s evidence, want traffic", first0["kind"])
	}
	if restoredEarly {
		t.Errorf("restored before its probe inference succeeded: %v", path)
	}
	if attestedOK == 0 {
		t.Errorf("no attested ok sample while it was out: the health checks should pass")
	}
	if back.Reason != ln.ProbeSucceeded {
		t.Errorf("restored by %s, want the probe inference", back.Reason)
	}
}
