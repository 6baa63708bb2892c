package upgrade_test

import (
	"fmt"
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
	n := startOnRelease(t, prev, 4700, app.UpgradeV4, 30)
	started := time.Now()
	t.Logf("release %s built and the network up in %s", prev.Commit[:7], started.Sub(began).Round(time.Second))
	versionsBefore, stackBefore := moduleVersions(t, n, 0), stackVersions(t, n, 0)

	oldLoad := n.StartLoadOf(prev, 3, "old", 10*time.Minute)
	dark := n.Outage(3).Refuse().AwaitExclusion(0, 2*time.Minute)
	t.Logf("previous release: exec3 dark at %d, excluded at %d", dark.DarkAt, dark.ExcludedAt)
	h := scheduleHalt(t, n, prev, oldLoad, app.UpgradeV4, "Cosmos SDK v0.55 and CometBFT v0.40.", 70, "griefer")
	if h.OldAfter == 0 {
		t.Errorf("the previous release's load driver finished nothing after the halt:\n%s", oldLoad.Output())
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
	for height := h.At - 5; height <= h.At+10; height++ {
		layout, attested := n.BundleLayout(height)
		t.Logf("  %5d  %s, %d bytes, attested %v, exec3: %s", height, layout, n.BundleBytes(height), attested, n.BundleLine(height, dark.Addr))
		if layout != proposals.LayoutV3 || !attested {
			t.Errorf("block %d carries %s (attested %v): attestation lost across the upgrade", height, layout, attested)
		}
	}

	h.joinLate(t, n)
	before := ln.Export(t, prev.Inferenced(), backupHome(t, n, 0), 0)

	load := n.StartLoad(3, "new", 10*time.Minute)
	loadFrom := n.Height()
	freshOutage(t, n, dark)
	if err := load.Stop(); err != nil {
		t.Logf("load driver stopped before it settled: %v", err)
	}
	if k := answered(load.Events(), loadFrom, 1<<62); k == 0 {
		t.Errorf("this release's load driver finished nothing:\n%s", load.Output())
	} else {
		t.Logf("this release's load driver: %d inferences finished", k)
	}
	h.openExpired(t, n)

	after := h.exportAfter(t, n)
	writeArtifact(t, "export-before-v4.json", before)
	writeArtifact(t, "export-after-v4.json", after)
	c, err := compareExportsV4(before, after)
	if err != nil {
		t.Fatal(err)
	}
	c.report(t)
	if got := openInferences(t, before); got < len(h.Open) {
		t.Errorf("%d inferences open at the halt, want at least the %d opened by %d", got, len(h.Open), h.OpenedBy)
	}
	// Block H's attestations were applied by this release: the record of
	// exec3, dark across the halt, holds an attested miss at H (and at
	// H-1 in the previous release's state).
	missBefore, missAfter := recordField(before, dark.Addr, "attested_miss_at"), recordField(after, dark.Addr, "attested_miss_at")
	t.Logf("exec3's last attested miss: %s before the upgrade block, %s after it", missBefore, missAfter)
	if missBefore != fmt.Sprint(h.At-1) || missAfter != fmt.Sprint(h.At) {
		t.Errorf("exec3's attested_miss_at %s -> %s, want %d -> %d: block %d's attestations not applied", missBefore, missAfter, h.At-1, h.At, h.At)
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
