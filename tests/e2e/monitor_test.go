package e2e_test

import (
	"testing"
	"time"

	ln "github.com/inferenced/inferenced/tests/internal/localnet"
)

// Scenario 6, monitor failure: validator 3 runs with its health monitor
// disabled, so it abstains (empty extensions). Blocks keep their pace and
// the other three still reach verdicts: a dark executor is excluded within
// 3 blocks and restored through PROBE.
func TestValidatorWithoutMonitor(t *testing.T) {
	cfg := ln.DefaultConfig()
	cfg.PortOffset = 3000
	cfg.MonitorOffNodes = []int{3}
	n := start(t, cfg)
	dead := n.ExecutorAddr(1)
	n.WaitHeight(6, time.Minute)
	o := n.Outage(1).DarkAndBack(1)
	pace := n.BlockTimes(2, n.Height())

	t.Logf("validator 3 has no monitor; executor exec1 %s", dead)
	for h := o.DarkAt + 1; h <= o.ExcludedAt; h++ {
		t.Logf("  %5d  bundle: %s", h, n.BundleLine(h, dead))
	}
	t.Logf("  dark at %d, EXCLUDED at %d (+%d blocks, evidence %s), HEALTHY at %d by %s; blocks every %s (timeout_commit 500ms)",
		o.DarkAt, o.ExcludedAt, o.ExcludedAt-(o.DarkAt+1), o.Kind, o.HealthyAt, o.RestoredBy, pace.Round(time.Millisecond))

	if v := n.VoteOf(o.ExcludedAt, 3, dead); v != "abstained" {
		t.Errorf("validator 3's vote in block %d: %s, want abstained", o.ExcludedAt, v)
	}
	if got := o.ExcludedAt - (o.DarkAt + 1); got > maxBlocksToExclusion {
		t.Errorf("excluded %d blocks after the outage could be seen, want <= %d", got, maxBlocksToExclusion)
	}
	if o.Kind != ln.Attested || !o.SawProbe {
		t.Errorf("excluded on %s, through PROBE %v: want attested evidence and a PROBE", o.Kind, o.SawProbe)
	}
	// Behaviour, not timing: a stall (a round timing out for want of
	// votes) takes seconds; normal blocks here take 0.5-0.7 s.
	if pace > 1500*time.Millisecond {
		t.Errorf("blocks every %s with one validator abstaining", pace)
	}
}
