package e2e_test

import (
	"testing"
	"time"
)

// Scenario 6, monitor failure: validator 3 runs with its health monitor
// disabled, so it abstains (empty extensions). Blocks keep their pace and
// the other three still reach verdicts: a dark executor is excluded within
// 3 blocks and restored through PROBE.
func TestValidatorWithoutMonitor(t *testing.T) {
	n := start(t, 3000, "NUM_VALIDATORS=4", "NUM_EXECUTORS=4", "BLOCK_TIME=500ms", "EPOCH_LENGTH=1000",
		"CB_INITIAL_COOLDOWN=8", "CB_MAX_COOLDOWN=64", "MONITOR_OFF_NODES=3")
	dead := n.KeyAddress("exec1")
	n.WaitHeight(6, time.Minute)
	o := goDarkAndBack(t, n, 1, dead, 1)
	pace := n.BlockTimes(2, n.Height())

	t.Logf("validator 3 has no monitor; executor exec1 %s", dead)
	for h := o.darkAt + 1; h <= o.excludedAt; h++ {
		t.Logf("  %5d  bundle: %s", h, n.BundleLine(h, dead))
	}
	t.Logf("  dark at %d, EXCLUDED at %d (+%d blocks, evidence %s), HEALTHY at %d by %s; blocks every %s (timeout_commit 500ms)",
		o.darkAt, o.excludedAt, o.excludedAt-(o.darkAt+1), o.kind, o.healthyAt, o.restoredBy, pace.Round(time.Millisecond))

	if v := n.VoteOf(o.excludedAt, 3, dead); v != "abstained" {
		t.Errorf("validator 3's vote in block %d: %s, want abstained", o.excludedAt, v)
	}
	if got := o.excludedAt - (o.darkAt + 1); got > maxBlocksToExclusion {
		t.Errorf("excluded %d blocks after the outage could be seen, want <= %d", got, maxBlocksToExclusion)
	}
	if o.kind != "SAMPLE_KIND_ATTESTED" || !o.sawProbe {
		t.Errorf("excluded on %s, through PROBE %v: want attested evidence and a PROBE", o.kind, o.sawProbe)
	}
	// Behaviour, not timing: a stall (a round timing out for want of
	// votes) takes seconds; normal blocks here take 0.5-0.7 s.
	if pace > 1500*time.Millisecond {
		t.Errorf("blocks every %s with one validator abstaining", pace)
	}
}
