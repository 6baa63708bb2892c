package localnet_test

import (
	"testing"
	"time"

	ln "github.com/inferenced/inferenced/tests/internal/localnet"
)

// TestLocalnetBreakerTimeline runs the load driver against four executors,
// takes one dark, and follows it through the breaker: excluded on its
// traffic misses, back up, promoted to PROBE after the cooldown, its probe
// answered, HEALTHY again. It prints the timeline in blocks.
//
// Vote extensions are off (VE_ENABLE_HEIGHT=0), so the chain runs on
// traffic samples alone; the attested path is covered by tests/e2e
// (TestIdleExecutorExcludedByAttestationAlone and the others).
//
// The SPRT threshold is raised: with a handful of finishes before going
// dark, the misses of requests already in flight would otherwise make the
// SPRT take the executor out for the rest of the epoch, as it should, and
// there would be no recovery to show.
// maxBlocksToTrafficExclusion bounds dark-to-EXCLUDED on traffic alone.
const maxBlocksToTrafficExclusion = 30

func TestLocalnetBreakerTimeline(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a 4-validator network; run without -short")
	}
	cfg := ln.DefaultConfig()
	cfg.PortOffset = 5300
	cfg.ExpirationBlocks, cfg.SPRTThreshold = 3, 50
	cfg.VEEnableHeight = ln.Int64(0)
	n := ln.Start(t, cfg)
	dark := n.ExecutorAddr(1)
	load := n.StartLoad(4, "cb", 4*time.Minute)

	begin := n.Height()
	n.WaitHeight(begin+4, time.Minute) // traffic is flowing
	// Switched off at once, and back up as soon as it is seen EXCLUDED.
	o := n.Outage(1).Refuse().AwaitExclusion(0, 3*time.Minute).Up().AwaitRecovery(3 * time.Minute)
	if err := load.Stop(); err != nil {
		t.Fatalf("loadgen: %v\n%s", err, load.Output())
	}

	darkAt, upAt, excluded, probe, healthy := o.DarkAt, o.UpAt, o.Exclusion, o.Probe, o.Recovery
	E, P, H := ln.Atoi(t, excluded.ExcludedAt), ln.Atoi(t, probe.SinceHeight), ln.Atoi(t, healthy.SinceHeight)
	if probe.State == "" {
		P = 0 // promoted and restored between two polls
	}
	var beforeExcl, duringExcl, probes, probeAnswered int
	var probeHeight int64
	for _, ev := range load.Events() {
		if ev.Executor != dark || ev.Height < darkAt {
			continue
		}
		switch {
		case ev.Probe:
			probes++
			if ev.Outcome == "answered" && probeHeight == 0 {
				probeAnswered++
				probeHeight = ev.Height
			}
		case ev.Height < E:
			beforeExcl++
		case ev.Height < H:
			duringExcl++ // a request routed while excluded or probing
		}
	}
	t.Logf("loadgen:\n%s", load.Output())
	t.Logf("timeline (blocks), executor exec1 %s:", dark)
	t.Logf("  %5d  goes dark (last committed block when its endpoint started refusing)", darkAt)
	ev := n.TransitionEvent(E, dark)
	t.Logf("  %5d  EXCLUDED, reason %s, %s of the last %s traffic samples missed: +%d blocks after dark",
		E, excluded.Reason, ev["misses"], ev["samples"], E-darkAt)
	t.Logf("  %5d  endpoint back up", upAt)
	t.Logf("  %5d  PROBE after the %s-block cooldown (eligible at %s)", P, excluded.CooldownBlocks, excluded.EligibleHeight)
	t.Logf("  %5d  probe request routed (query height)", probeHeight)
	t.Logf("  %5d  HEALTHY, reason %s: +%d blocks after PROBE, +%d after dark", H, healthy.Reason, H-P, H-darkAt)
	t.Logf("  requests routed to exec1 after it went dark: %d before exclusion, %d non-probe while out, %d offered as probe"+
		" (a probe offer made before the first probe's start landed is refused on chain: one slot)",
		beforeExcl, duringExcl, probes)

	if ev["to"] != ln.Excluded || ev["kind"] != ln.Traffic {
		t.Errorf("exclusion event at %d: %v", E, ev)
	}
	if healthy.Reason != ln.ProbeSucceeded {
		t.Errorf("restored by %s, want a probe success", healthy.Reason)
	}
	// The traffic rule (24 / 12 / 26% / 8 in a row, issue 11) needs about
	// eight corroborated misses; at 4 requests a block over 4 executors
	// exec1 gets about one a block, expiring 3 blocks later, so exclusion
	// comes 8-24 blocks after dark (nine runs on a loaded 2-core machine,
	// where the driver falls behind). The attested path's 3-block bound is
	// tests/e2e's.
	if E-darkAt > maxBlocksToTrafficExclusion {
		t.Errorf("excluded %d blocks after going dark, more than %d", E-darkAt, maxBlocksToTrafficExclusion)
	}
	if P != 0 && P < E+ln.Atoi(t, excluded.CooldownBlocks) {
		t.Errorf("PROBE at %d before the cooldown ended at %s", P, excluded.EligibleHeight)
	}
	if duringExcl != 0 {
		t.Errorf("%d non-probe requests were routed to the excluded executor", duringExcl)
	}
	if probeAnswered != 1 {
		t.Errorf("%d answered probes, want 1", probeAnswered)
	}
}
