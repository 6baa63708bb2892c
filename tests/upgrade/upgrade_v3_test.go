package upgrade_test

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/inferenced/inferenced/abci/proposals"
	"github.com/inferenced/inferenced/app"
	ln "github.com/inferenced/inferenced/tests/internal/localnet"
)

// TestUpgradeV3CrossesTheBundleSwitch: four validators under cosmovisor on
// the release right before this one (tests/upgrade/PREVIOUS_RELEASE,
// x/inference version 5, health bundles in HEALTH2), its load driver
// running and an executor dark, pass a governance MsgSoftwareUpgrade to
// v3. Every node halts at the plan height H and cosmovisor restarts it on
// this release; node 3, stopped before the halt, joins late (block sync
// through H on the previous release, H itself on this one). Asserted:
// blocks up to H carry HEALTH2 and blocks from H+1 HEALTH3, H+1 with the
// attestations of H's extensions (made by the previous release); block H's
// attestations were applied by this release (the dark executor's record
// says an attested miss at H); the exports before and after differ by the
// switch height alone; the previous release's load driver finishes
// inferences on both sides of the halt; the breaker excludes a fresh
// outage within 3 blocks on HEALTH3 attestations and both executors
// recover; all 4 nodes compute the same app hash at every height.
func TestUpgradeV3CrossesTheBundleSwitch(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a 4-validator network; run without -short")
	}
	began := time.Now()
	prev := ln.BuildRelease(t, ln.PreviousRelease(t))
	bins := ln.Binaries(t)
	cfg := ln.DefaultConfig()
	cfg.PortOffset = 4700
	cfg.Inferenced = prev.Inferenced()
	cfg.InitScript = prev.InitScript()
	cfg.Cosmovisor, cfg.CosmovisorBin = true, ln.CosmovisorBin(t)
	cfg.UpgradeName, cfg.UpgradeBin = app.UpgradeV3, filepath.Join(bins, "inferenced")
	n := ln.Start(t, cfg)
	n.WaitHeight(3, time.Minute)
	started := time.Now()
	t.Logf("release %s built and the network up in %s", prev.Commit[:7], started.Sub(began).Round(time.Second))

	oldLoad := n.StartLoadOf(prev, 3, "old", 10*time.Minute)
	dark := n.Outage(3).Refuse().AwaitExclusion(0, 2*time.Minute)
	t.Logf("previous release: exec3 dark at %d, excluded at %d", dark.DarkAt, dark.ExcludedAt)

	// The 20 s voting period is about 35 blocks here; 70 leave room.
	upgradeAt := n.Height() + 70
	plan := map[string]any{"@type": "/cosmos.upgrade.v1beta1.MsgSoftwareUpgrade", "authority": n.GovAddress(),
		"plan": map[string]any{"name": app.UpgradeV3, "height": fmt.Sprint(upgradeAt)}}
	n.PassProposal(n.ProposalFile("Upgrade to "+app.UpgradeV3, "Health bundles in HEALTH3.", plan), 2*time.Minute)
	passedAt := n.Height()
	n.WaitHeight(upgradeAt-15, 3*time.Minute)
	n.StopNode(3)
	lateStopped := n.Height()

	n.WaitHeight(upgradeAt, 3*time.Minute)
	for i := 0; i < 3; i++ {
		waitUpgraded(t, n, i, app.UpgradeV3, upgradeAt, 2*time.Minute)
	}
	n.WaitHeight(upgradeAt+15, 3*time.Minute)
	if err := oldLoad.Stop(); err != nil {
		t.Logf("previous release's load driver: %v", err)
	}
	oldBefore, oldAfter := answered(oldLoad.Events(), 0, upgradeAt), answered(oldLoad.Events(), upgradeAt+1, 1<<62)
	t.Logf("timeline: plan height %d (proposal passed by %d); node 3 stopped at %d; blocks %d..%d at %s %s %s %s (the halt: %s from H+1 to H+2)",
		upgradeAt, passedAt, lateStopped, upgradeAt, upgradeAt+3, blockTime(t, n, upgradeAt), blockTime(t, n, upgradeAt+1),
		blockTime(t, n, upgradeAt+2), blockTime(t, n, upgradeAt+3), n.BlockTimes(upgradeAt+1, upgradeAt+2))
	logCosmovisor(t, n, 0)
	t.Logf("the previous release's load driver: %d inferences finished before the halt, %d after", oldBefore, oldAfter)
	if oldBefore == 0 || oldAfter == 0 {
		t.Errorf("the previous release's load driver finished %d before the halt and %d after, want some on both sides:\n%s",
			oldBefore, oldAfter, oldLoad.Output())
	}

	// The switch: HEALTH2 up to H (H was proposed by the previous release),
	// HEALTH3 from H+1, which carries the previous release's extensions of H.
	for h := upgradeAt - 5; h <= upgradeAt+10; h++ {
		want := proposals.LayoutV3
		if h <= upgradeAt {
			want = proposals.LayoutV2
		}
		layout, attested := n.BundleLayout(h)
		t.Logf("  %5d  %s, %d bytes, attested %v, exec3: %s", h, layout, n.BundleBytes(h), attested, n.BundleLine(h, dark.Addr))
		if layout != want {
			t.Errorf("block %d carries %s, want %s", h, layout, want)
		}
		if (h == upgradeAt || h == upgradeAt+1) && !attested {
			t.Errorf("block %d carries the empty bundle: the attestations across the switch were lost", h)
		}
	}
	samples, err := n.Samples(upgradeAt)
	if err != nil || samples[dark.Addr] != "miss" {
		t.Fatalf("block %d (HEALTH2) attests %q for the dark exec3 (%v), want miss", upgradeAt, samples[dark.Addr], err)
	}
	// Verdicts relative to the chain's reference from H+2's extensions
	// (the bundle of H+3): validators that see exec3 dark, as the chain
	// attested, send no verdict. Before the switch they sent its miss.
	if silent, attested := n.SilentVotes(upgradeAt); attested == 0 || silent > 0 {
		t.Errorf("block %d: %d of %d votes all ok while exec3 is dark: verdicts relative before the switch", upgradeAt, silent, attested)
	}
	silentAfter := 0
	for h := upgradeAt + 3; h <= upgradeAt+10; h++ {
		silent, attested := n.SilentVotes(h)
		t.Logf("  %5d  %d of %d votes send no verdict (relative to the reference)", h, silent, attested)
		silentAfter += silent
	}
	if silentAfter == 0 {
		t.Errorf("no vote in blocks %d-%d sent its verdicts relative to the chain's reference", upgradeAt+3, upgradeAt+10)
	}

	// The late node: cosmovisor runs the previous release up to H (block
	// sync: no ProcessProposal, H's bundle decoded by this release's
	// pre-blocker alone), then this one.
	if out, err := n.Script(5*time.Minute, "start"); err != nil {
		t.Fatalf("start node 3: %v\n%s", err, out)
	}
	joined := time.Now()
	waitUpgraded(t, n, 3, app.UpgradeV3, upgradeAt, 3*time.Minute)
	n.WaitCaughtUp(3, 3*time.Minute)
	t.Logf("node 3 joined late: caught up at %d in %s", n.HeightOn(3), time.Since(joined).Round(time.Second))
	logCosmovisor(t, n, 3)

	before := ln.Export(t, prev.Inferenced(), backupHome(t, n, 0), 0)

	// The breaker on HEALTH3 attestations: exec3 comes back through a
	// probe, then a fresh outage is excluded within 3 blocks.
	load := n.StartLoad(3, "new", 10*time.Minute)
	loadFrom := n.Height()
	dark.Up().AwaitRecovery(3 * time.Minute)
	t.Logf("this release: exec3 (dark across the upgrade) healthy at %d by %s", dark.HealthyAt, dark.RestoredBy)
	fresh := n.Outage(2).Dark().AwaitExclusion(0, 2*time.Minute).Evidence()
	blocks := fresh.ExcludedAt - (fresh.DarkAt + 1)
	t.Logf("this release: exec2 dark from block %d, excluded at %d (%d blocks, %s evidence)", fresh.DarkAt+1, fresh.ExcludedAt, blocks, fresh.Kind)
	if blocks > 3 {
		t.Errorf("exec2 excluded %d blocks after its first dark block, want within 3", blocks)
	}
	if layout, _ := n.BundleLayout(fresh.ExcludedAt); layout != proposals.LayoutV3 {
		t.Errorf("the exclusion's block %d carries %s", fresh.ExcludedAt, layout)
	}
	fresh.Up().AwaitRecovery(3 * time.Minute)
	t.Logf("this release: exec2 healthy again at %d by %s", fresh.HealthyAt, fresh.RestoredBy)
	if err := load.Stop(); err != nil {
		t.Logf("load driver stopped before it settled: %v", err)
	}
	if k := answered(load.Events(), loadFrom, 1<<62); k == 0 {
		t.Errorf("this release's load driver finished nothing:\n%s", load.Output())
	} else {
		t.Logf("this release's load driver: %d inferences finished", k)
	}

	// The export after: node 2 stopped for it, at the upgrade height.
	n.StopNode(2)
	after := ln.Export(t, filepath.Join(bins, "inferenced"), filepath.Join(n.Home, "node2"), upgradeAt)
	if out, err := n.Script(5*time.Minute, "start"); err != nil {
		t.Fatalf("restart node 2: %v\n%s", err, out)
	}
	writeArtifact(t, "export-before-v3.json", before)
	writeArtifact(t, "export-after-v3.json", after)
	c, err := compareExportsV3(before, after, upgradeAt)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range c.Summary {
		t.Logf("export diff: %s", line)
	}
	for _, p := range c.Problems {
		t.Errorf("export diff: %s", p)
	}
	// Block H's HEALTH2 attestations were applied by this release: the
	// record of exec3, dark across the halt, holds an attested miss at H
	// (and at H-1 in the previous release's state).
	missBefore, missAfter := recordField(before, dark.Addr, "attested_miss_at"), recordField(after, dark.Addr, "attested_miss_at")
	t.Logf("exec3's last attested miss: %s before the upgrade block, %s after it", missBefore, missAfter)
	if missBefore != fmt.Sprint(upgradeAt-1) || missAfter != fmt.Sprint(upgradeAt) {
		t.Errorf("exec3's attested_miss_at %s -> %s, want %d -> %d: block %d's attestations not applied", missBefore, missAfter, upgradeAt-1, upgradeAt, upgradeAt)
	}

	// Every node, the same app hash at every height.
	n.WaitCaughtUp(2, 2*time.Minute)
	top := min(n.HeightOn(0), n.HeightOn(1), n.HeightOn(2), n.HeightOn(3))
	if err := n.SameAppHashes(2, top, 1, 2, 3); err != nil {
		t.Fatal(err)
	}
	t.Logf("app hashes equal on 4 nodes at every height 2..%d; the network ran %s, the test %s",
		top, time.Since(started).Round(time.Second), time.Since(began).Round(time.Second))
}
