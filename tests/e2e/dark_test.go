package e2e_test

import (
	"fmt"
	"testing"
	"time"

	ln "github.com/inferenced/inferenced/tests/internal/localnet"
)

// outage is one dark period of an executor, in blocks.
type outage struct {
	darkAt, excludedAt, upAt, healthyAt, cooldown int64
	kind, restoredBy                              string
	sawProbe                                      bool
}

// goDarkAndBack takes executor j (address addr) dark, waits for its
// exclusion number k, brings it back and waits until it is HEALTHY again.
func goDarkAndBack(t *testing.T, n *ln.Net, j int, addr string, k int) outage {
	t.Helper()
	o := outage{darkAt: n.GoDark(j)}
	ex := n.WaitHealth(addr, fmt.Sprintf("exclusion %d", k), 2*time.Minute, func(h ln.HealthJSON) bool {
		return h.State == "HEALTH_STATE_EXCLUDED" && h.Exclusions == k
	})
	o.excludedAt, o.cooldown = ln.Atoi(t, ex.ExcludedAt), ln.Atoi(t, ex.CooldownBlocks)
	o.kind = n.TransitionEvent(o.excludedAt, addr)["kind"]
	n.Control(j, "/control/up")
	o.upAt = n.Height()
	back := n.WaitHealth(addr, fmt.Sprintf("recovery %d", k), 3*time.Minute, func(h ln.HealthJSON) bool {
		return h.State == "HEALTH_STATE_HEALTHY" && ln.Atoi(t, h.SinceHeight) > o.excludedAt
	})
	o.healthyAt, o.restoredBy = ln.Atoi(t, back.SinceHeight), back.Reason
	o.sawProbe = ln.SawProbe(n, addr, o.excludedAt, o.healthyAt)
	return o
}

// Scenario 1, dark executor under load: with the load driver running, an
// executor goes dark and is excluded within 3 blocks of the first
// extensions that could see it; the requests routed to it after it went
// dark are counted; it comes back through PROBE to HEALTHY; then it flaps,
// and each exclusion in the epoch doubles its cooldown up to the cap
// (8, 16, 32, 32 here: the law of the defaults 50, 100, 200 ... 500).
func TestDarkExecutorUnderLoad(t *testing.T) {
	n := start(t, 1000, "NUM_VALIDATORS=4", "NUM_EXECUTORS=4", "EXPIRATION_BLOCKS=3", "BLOCK_TIME=500ms",
		"EPOCH_LENGTH=1000", "CB_INITIAL_COOLDOWN=8", "CB_MAX_COOLDOWN=32", "DOWNTIME_H_THRESHOLD=50")
	dark := n.KeyAddress("exec1")
	load := n.StartLoad(4, "dark", 8*time.Minute)
	n.WaitHeight(n.Height()+4, time.Minute) // traffic is flowing

	wantCooldowns := []int64{8, 16, 32, 32}
	var outages []outage
	for k := range wantCooldowns {
		outages = append(outages, goDarkAndBack(t, n, 1, dark, k+1))
	}
	load.Stop()

	// Requests the load driver sent exec1 (drawn at a height, started in
	// the next block) while it was dark: before its exclusion, and while
	// out (only a probe may be routed then).
	routed := make([]struct{ beforeExclusion, whileOut, probes int }, len(outages))
	for _, ev := range load.Events() {
		if ev.Executor != dark {
			continue
		}
		for i, o := range outages {
			switch {
			case ev.Height < o.darkAt || ev.Height >= o.healthyAt:
			case ev.Probe:
				routed[i].probes++
			case ev.Height < o.excludedAt:
				routed[i].beforeExclusion++
			default:
				routed[i].whileOut++
			}
		}
	}
	t.Logf("load driver: %s", load.Output())
	t.Logf("executor exec1 %s, load 4 requests/block, cooldowns %v:", dark, wantCooldowns)
	t.Logf("  %-6s %6s %9s %7s %8s %8s %9s %-26s %-28s %s", "outage", "dark", "excluded", "blocks", "cooldown",
		"back up", "healthy", "evidence", "restored by", "routed to it: before exclusion / non-probe while out / probes")
	for i, o := range outages {
		t.Logf("  %-6d %6d %9d %7d %8d %8d %9d %-26s %-28s %d / %d / %d", i+1, o.darkAt, o.excludedAt,
			o.excludedAt-(o.darkAt+1), o.cooldown, o.upAt, o.healthyAt, o.kind, o.restoredBy,
			routed[i].beforeExclusion, routed[i].whileOut, routed[i].probes)
	}
	t.Logf("  (blocks: from the first block whose extensions could see the outage, dark+1, to the exclusion)")

	for i, o := range outages {
		if got := o.excludedAt - (o.darkAt + 1); got > maxBlocksToExclusion {
			t.Errorf("outage %d: excluded %d blocks after the outage could be seen, want <= %d", i+1, got, maxBlocksToExclusion)
		}
		if o.cooldown != wantCooldowns[i] {
			t.Errorf("outage %d: cooldown %d, want %d", i+1, o.cooldown, wantCooldowns[i])
		}
		if !o.sawProbe {
			t.Errorf("outage %d: restored at %d without passing through PROBE", i+1, o.healthyAt)
		}
		if o.healthyAt < o.excludedAt+o.cooldown {
			t.Errorf("outage %d: HEALTHY at %d, before the cooldown ended at %d", i+1, o.healthyAt, o.excludedAt+o.cooldown)
		}
		if routed[i].whileOut != 0 {
			t.Errorf("outage %d: %d non-probe requests routed to the excluded executor", i+1, routed[i].whileOut)
		}
	}
}
