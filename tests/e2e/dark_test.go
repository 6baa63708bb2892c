package e2e_test

import (
	"testing"
	"time"

	ln "github.com/inferenced/inferenced/tests/internal/localnet"
)

// Scenario 1, dark executor under load: with the load driver running, an
// executor goes dark and is excluded within 3 blocks of the first
// extensions that could see it; the requests routed to it after it went
// dark are counted; it comes back through PROBE to HEALTHY; then it flaps,
// and each exclusion in the epoch doubles its cooldown up to the cap
// (8, 16, 32, 32 here: the law of the defaults 50, 100, 200 ... 500).
func TestDarkExecutorUnderLoad(t *testing.T) {
	cfg := ln.DefaultConfig()
	cfg.PortOffset = 1000
	cfg.ExpirationBlocks, cfg.MaxCooldown, cfg.SPRTThreshold = 3, 32, 50
	n := start(t, cfg)
	dark := n.ExecutorAddr(1)
	load := n.StartLoad(4, "dark", 8*time.Minute)
	n.WaitHeight(n.Height()+4, time.Minute) // traffic is flowing

	wantCooldowns := []int64{8, 16, 32, 32}
	var outages []*ln.Outage
	for k := range wantCooldowns {
		outages = append(outages, n.Outage(1).DarkAndBack(k+1))
	}
	if err := load.Stop(); err != nil {
		t.Logf("load driver: %v", err) // figures below use what it recorded
	}

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
			case ev.Height < o.DarkAt || ev.Height >= o.HealthyAt:
			case ev.Probe:
				routed[i].probes++
			case ev.Height < o.ExcludedAt:
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
		t.Logf("  %-6d %6d %9d %7d %8d %8d %9d %-26s %-28s %d / %d / %d", i+1, o.DarkAt, o.ExcludedAt,
			o.ExcludedAt-(o.DarkAt+1), o.Cooldown, o.UpAt, o.HealthyAt, o.Kind, o.RestoredBy,
			routed[i].beforeExclusion, routed[i].whileOut, routed[i].probes)
	}
	t.Logf("  (blocks: from the first block whose extensions could see the outage, dark+1, to the exclusion)")

	for i, o := range outages {
		if got := o.ExcludedAt - (o.DarkAt + 1); got > maxBlocksToExclusion {
			t.Errorf("outage %d: excluded %d blocks after the outage could be seen, want <= %d", i+1, got, maxBlocksToExclusion)
		}
		if o.Cooldown != wantCooldowns[i] {
			t.Errorf("outage %d: cooldown %d, want %d", i+1, o.Cooldown, wantCooldowns[i])
		}
		if !o.SawProbe {
			t.Errorf("outage %d: restored at %d without passing through PROBE", i+1, o.HealthyAt)
		}
		if o.HealthyAt < o.ExcludedAt+o.Cooldown {
			t.Errorf("outage %d: HEALTHY at %d, before the cooldown ended at %d", i+1, o.HealthyAt, o.ExcludedAt+o.Cooldown)
		}
		if routed[i].whileOut != 0 {
			t.Errorf("outage %d: %d non-probe requests routed to the excluded executor", i+1, routed[i].whileOut)
		}
	}
}
