package upgrade_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/inferenced/inferenced/abci/proposals"
	"github.com/inferenced/inferenced/app"
	ln "github.com/inferenced/inferenced/tests/internal/localnet"
)

// TestUpgradeV4ToTheCurrentCosmosFamily: four validators under cosmovisor
// on the release right before this one (tests/upgrade/PREVIOUS_RELEASE:
// SDK v0.53, CometBFT v0.38), its load driver running, an executor dark and
// inferences open, pass a governance MsgSoftwareUpgrade to v4. Every node
// halts at the plan height H and cosmovisor restarts it on this release
// (SDK v0.55, CometBFT v0.40); node 3, stopped before the halt, joins late
// (block sync through H on the previous release, from peers already on
// CometBFT v0.40, then this one). Asserted: every block around the upgrade
// carries an attested bundle, and block H's attestations were applied by
// this release (the dark executor's attested miss at H); the module
// versions move as the SDK's migrations say (x/auth 5 to 7, x/staking 5 to
// 6, x/inference at 7) and the nodes run CometBFT v0.40; the exports
// before and after compare as v4 says (compareExportsV4); the previous
// release's load driver finishes inferences on both sides of the halt and
// this release's after it; the breaker excludes a fresh outage within 3
// blocks and both executors recover; all 4 nodes compute the same app hash
// at every height.
func TestUpgradeV4ToTheCurrentCosmosFamily(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a 4-validator network; run without -short")
	}
	began := time.Now()
	prev := ln.BuildRelease(t, ln.PreviousRelease(t))
	bins := ln.Binaries(t)
	cfg := ln.DefaultConfig()
	cfg.PortOffset = 4700
	// Inferences started a few blocks before the halt stay open across it
	// and expire on this release (the expiry queue carried over).
	cfg.ExpirationBlocks = 30
	cfg.Inferenced = prev.Inferenced()
	cfg.InitScript = prev.InitScript()
	cfg.Cosmovisor, cfg.CosmovisorBin = true, ln.CosmovisorBin(t)
	cfg.UpgradeName, cfg.UpgradeBin = app.UpgradeV4, filepath.Join(bins, "inferenced")
	n := ln.Start(t, cfg)
	n.WaitHeight(3, time.Minute)
	started := time.Now()
	t.Logf("release %s built and the network up in %s", prev.Commit[:7], started.Sub(began).Round(time.Second))
	versionsBefore, stackBefore := moduleVersions(t, n, 0), stackVersions(t, n, 0)

	oldLoad := n.StartLoadOf(prev, 3, "old", 10*time.Minute)
	dark := n.Outage(3).Refuse().AwaitExclusion(0, 2*time.Minute)
	t.Logf("previous release: exec3 dark at %d, excluded at %d", dark.DarkAt, dark.ExcludedAt)

	// The 20 s voting period is about 35 blocks here; 70 leave room.
	upgradeAt := n.Height() + 70
	plan := map[string]any{"@type": "/cosmos.upgrade.v1beta1.MsgSoftwareUpgrade", "authority": n.GovAddress(),
		"plan": map[string]any{"name": app.UpgradeV4, "height": fmt.Sprint(upgradeAt)}}
	n.PassProposal(n.ProposalFile("Upgrade to "+app.UpgradeV4, "Cosmos SDK v0.55 and CometBFT v0.40.", plan), 2*time.Minute)
	passedAt := n.Height()
	n.WaitHeight(upgradeAt-15, 3*time.Minute)
	n.StopNode(3)
	lateStopped := n.Height()
	// Open across the halt: started by an agent the load driver does not
	// play, on executors that are up, finished by nobody.
	n.WaitHeight(upgradeAt-8, 2*time.Minute)
	var open []string
	for k := range 3 {
		id := fmt.Sprintf("across-v4-%d", k)
		if code, log := n.TxOf(prev, "griefer", "inference", "start-inference", id, ln.Model, n.ExecutorAddr(k)); code != 0 {
			t.Fatalf("start %s on the previous release: code %d: %s", id, code, log)
		}
		open = append(open, id)
	}
	openedBy := n.Height()

	n.WaitHeight(upgradeAt, 3*time.Minute)
	for i := 0; i < 3; i++ {
		waitUpgraded(t, n, i, app.UpgradeV4, upgradeAt, 2*time.Minute)
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

	versionsAfter, stackAfter := moduleVersions(t, n, 0), stackVersions(t, n, 0)
	t.Logf("node 0 runs SDK %s, CometBFT %s -> SDK %s, CometBFT %s (its /status says %s -> %s); module versions %s -> %s",
		stackBefore.SDK, stackBefore.Comet, stackAfter.SDK, stackAfter.Comet, stackBefore.Status, stackAfter.Status, versionsBefore, versionsAfter)
	for module, want := range map[string][2]string{"auth": {"5", "7"}, "staking": {"5", "6"}, "inference": {"7", "7"}, "bank": {"4", "4"}} {
		if got := [2]string{versionsBefore[module], versionsAfter[module]}; got != want {
			t.Errorf("x/%s version %s -> %s, want %s -> %s", module, got[0], got[1], want[0], want[1])
		}
	}
	if !strings.HasPrefix(stackBefore.SDK, "v0.53.") || !strings.HasPrefix(stackAfter.SDK, "v0.55.") ||
		!strings.HasPrefix(stackBefore.Comet, "v0.38.") || !strings.HasPrefix(stackAfter.Comet, "v0.40.") {
		t.Errorf("node 0 ran SDK %s with CometBFT %s, then SDK %s with CometBFT %s; want v0.53 and v0.38, then v0.55 and v0.40",
			stackBefore.SDK, stackBefore.Comet, stackAfter.SDK, stackAfter.Comet)
	}

	// Attestation across the halt: every block carries an attested
	// bundle, H+1 the previous release's extensions of H.
	for h := upgradeAt - 5; h <= upgradeAt+10; h++ {
		layout, attested := n.BundleLayout(h)
		t.Logf("  %5d  %s, %d bytes, attested %v, exec3: %s", h, layout, n.BundleBytes(h), attested, n.BundleLine(h, dark.Addr))
		if layout != proposals.LayoutV3 || !attested {
			t.Errorf("block %d carries %s (attested %v): attestation lost across the upgrade", h, layout, attested)
		}
	}

	// The late node: cosmovisor runs the previous release up to H, then
	// this one.
	if out, err := n.Script(5*time.Minute, "start"); err != nil {
		t.Fatalf("start node 3: %v\n%s", err, out)
	}
	joined := time.Now()
	waitUpgraded(t, n, 3, app.UpgradeV4, upgradeAt, 3*time.Minute)
	n.WaitCaughtUp(3, 3*time.Minute)
	t.Logf("node 3 joined late: caught up at %d in %s", n.HeightOn(3), time.Since(joined).Round(time.Second))
	logCosmovisor(t, n, 3)

	before := ln.Export(t, prev.Inferenced(), backupHome(t, n, 0), 0)

	// The breaker on this release: exec3 comes back through a probe, then
	// a fresh outage is excluded within 3 blocks.
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
	writeArtifact(t, "export-before-v4.json", before)
	writeArtifact(t, "export-after-v4.json", after)
	c, err := compareExportsV4(before, after)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range c.Summary {
		t.Logf("export diff: %s", line)
	}
	for _, p := range c.Problems {
		t.Errorf("export diff: %s", p)
	}
	// The inferences opened before the halt: open in the previous
	// release's last state, expired by this release at their height.
	if got := openInferences(t, before); got < len(open) {
		t.Errorf("%d inferences open at the halt, want at least the %d opened by %d", got, len(open), openedBy)
	}
	for _, id := range open {
		inf := n.Inference(n.KeyAddress("griefer"), id)
		t.Logf("inference griefer/%s (opened by %d, open across H=%d): %s at %s", id, openedBy, upgradeAt, inf.Status, inf.ExpirationHeight)
		if inf.Status != "INFERENCE_STATUS_EXPIRED" {
			t.Errorf("inference griefer/%s is %s, want expired by this release at %s", id, inf.Status, inf.ExpirationHeight)
		}
	}
	// Block H's attestations were applied by this release: the record of
	// exec3, dark across the halt, holds an attested miss at H (and at
	// H-1 in the previous release's state).
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
