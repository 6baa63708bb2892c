package e2e_test

import (
	"fmt"
	"testing"
	"time"

	ln "github.com/inferenced/inferenced/tests/internal/localnet"
)

// Scenario 8, epoch boundary: an executor excluded with a cooldown that
// runs past the end of the epoch is HEALTHY again from the first block of
// the next epoch, and the breaker holds nothing on anyone.
func TestEpochBoundaryClearsTheBreaker(t *testing.T) {
	const epochLength, cooldown = 40, 30
	cfg := ln.DefaultConfig()
	cfg.PortOffset = 3500
	cfg.EpochLength, cfg.InitialCooldown, cfg.MaxCooldown = epochLength, cooldown, 35
	n := start(t, cfg)
	dead := n.ExecutorAddr(1)
	var epoch struct {
		Epoch struct {
			Index       string `json:"index"`
			StartHeight string `json:"start_height"`
		} `json:"epoch"`
		Next string `json:"next_epoch_height"`
	}
	if err := n.Query(&epoch, "inference", "current-epoch"); err != nil {
		t.Fatal(err)
	}
	boundary := ln.Atoi(t, epoch.Next)
	n.WaitHeight(ln.Atoi(t, epoch.Epoch.StartHeight)+12, time.Minute) // exclusion + cooldown past the boundary
	// Back up at once: only the cooldown keeps it out past the boundary.
	o := n.Outage(1).Dark().AwaitExclusion(0, time.Minute).Up()
	darkAt, out := o.DarkAt, o.Exclusion
	eligible := ln.Atoi(t, out.EligibleHeight)
	if eligible <= boundary {
		t.Fatalf("excluded at %s, eligible at %d: not past the boundary at %d; lengthen the cooldown", out.ExcludedAt, eligible, boundary)
	}
	// Each reading is pinned to its block: a query sent just as the
	// boundary commits would otherwise describe the wrong side of it.
	n.WaitHeight(boundary, 2*time.Minute)
	var before, after ln.HealthJSON
	n.Eventually("state of the last block of the epoch", 30*time.Second, func() (err error) {
		before, err = n.HealthAt(0, dead, boundary-1)
		return err
	})
	n.Eventually("state of the first block of the next epoch", 30*time.Second, func() (err error) {
		after, err = n.HealthAt(0, dead, boundary)
		return err
	})
	var left []string
	for i := 0; i < 4; i++ {
		var list []ln.HealthJSON
		n.Eventually(fmt.Sprintf("node %d's excluded executors at %d", i, boundary), 30*time.Second, func() (err error) {
			list, err = n.ExcludedAt(i, boundary)
			return err
		})
		for _, h := range list {
			left = append(left, fmt.Sprintf("node %d: %s %s", i, h.Address, h.State))
		}
	}
	t.Logf("epoch length %d, next epoch at %d; exec1 dark at %d, EXCLUDED at %s (cooldown %s, eligible %d); back up at once",
		epochLength, boundary, darkAt, out.ExcludedAt, out.CooldownBlocks, eligible)
	t.Logf("  block %d (last of the epoch): %s, %d exclusions", boundary-1, before.State, before.Exclusions)
	t.Logf("  block %d (new epoch):        %s, %d exclusions; non-healthy executors on the 4 nodes at %d: %d", boundary, after.State, after.Exclusions, boundary, len(left))
	if before.State != ln.Excluded {
		t.Errorf("before the boundary: %s, want still EXCLUDED", before.State)
	}
	if after.State != ln.Healthy || after.Exclusions != 0 || after.ExcludedAt != "0" && after.ExcludedAt != "" {
		t.Errorf("after the boundary: %+v, want HEALTHY with no record", after)
	}
	if len(left) != 0 {
		t.Errorf("breaker records left after the boundary: %v", left)
	}
}
