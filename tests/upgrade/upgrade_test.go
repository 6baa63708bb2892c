package upgrade_test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cosmos/cosmos-sdk/codec"
	codectypes "github.com/cosmos/cosmos-sdk/codec/types"

	"github.com/inferenced/inferenced/app"
	ln "github.com/inferenced/inferenced/tests/internal/localnet"
	inferencetypes "github.com/inferenced/inferenced/x/inference/types"
)

// TestUpgradeV2UnderCosmovisor: four validators under cosmovisor on the
// release before v2 (tests/upgrade/PREVIOUS_RELEASE_V2, its own genesis and
// load driver), with vote extensions on as that release starts, an
// executor excluded and inferences open, pass a governance
// MsgSoftwareUpgrade to v2, which takes them straight to this release
// (migrations 1 to 6; TestUpgradeV3CrossesTheBundleSwitch takes the chain
// of the release right before this one). Every node halts at the plan height and
// cosmovisor restarts it on this release; node 3, stopped before the halt,
// joins late and takes the same path. The exports before and after compare
// as the migration says, every node computes the same app hashes, and the
// breaker, attestation and load work on the new binary.
func TestUpgradeV2UnderCosmovisor(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a 4-validator network; run without -short")
	}
	prev := ln.BuildRelease(t, ln.PreviousReleaseV2(t))
	bins := ln.Binaries(t)
	cfg := ln.DefaultConfig()
	cfg.PortOffset = 5600
	// Long enough for inferences started before the halt to be open across
	// it and expire on this release (the migrated expiry queue).
	cfg.ExpirationBlocks = 20
	cfg.Inferenced = prev.Inferenced()
	cfg.InitScript = prev.InitScript()
	cfg.Cosmovisor, cfg.CosmovisorBin = true, ln.CosmovisorBin(t)
	cfg.UpgradeName, cfg.UpgradeBin = app.UpgradeV2, filepath.Join(bins, "inferenced")
	n := ln.Start(t, cfg)
	n.WaitHeight(3, time.Minute)

	oldLoad := n.StartLoadOf(prev, 3, "old", 10*time.Minute)
	dark := n.Outage(3).Refuse().AwaitExclusion(0, 2*time.Minute)
	t.Logf("previous release: exec3 dark at %d, excluded at %d", dark.DarkAt, dark.ExcludedAt)

	// The 20 s voting period is about 35 blocks here; 80 leave room.
	upgradeAt := n.Height() + 80
	plan := map[string]any{"@type": "/cosmos.upgrade.v1beta1.MsgSoftwareUpgrade", "authority": n.GovAddress(),
		"plan": map[string]any{"name": app.UpgradeV2, "height": fmt.Sprint(upgradeAt)}}
	n.PassProposal(n.ProposalFile("Upgrade to "+app.UpgradeV2, "This release.", plan), 2*time.Minute)
	passedAt := n.Height()
	n.WaitHeight(upgradeAt-15, 3*time.Minute)
	n.StopNode(3)
	lateStopped := n.Height()
	// Inferences open at the halt: started, never finished (val0 is not an
	// agent the load driver plays, so nothing finishes them).
	n.WaitHeight(upgradeAt-8, 2*time.Minute)
	starter := n.KeyAddress("val0")
	var open []string
	for k := range 3 {
		id := fmt.Sprintf("open-%d", k)
		if code, log := n.TxOf(prev, "val0", "inference", "start-inference", id, "llama-7b", n.ExecutorAddr(k)); code != 0 {
			t.Fatalf("start %s on the previous release: code %d: %s", id, code, log)
		}
		open = append(open, id)
	}

	// The halt: the previous release stores block H but cannot run it.
	n.WaitHeight(upgradeAt, 3*time.Minute)
	for i := 0; i < 3; i++ {
		waitUpgraded(t, n, i, app.UpgradeV2, upgradeAt, 2*time.Minute)
	}
	n.WaitHeight(upgradeAt+3, 3*time.Minute)
	if err := oldLoad.Stop(); err != nil {
		t.Logf("previous release's load driver: %v", err)
	}
	oldAnswered := answered(oldLoad.Events(), 0, upgradeAt)
	// A header's time is the median of the last block's precommits: block
	// H+1's was voted before the halt, H+2's is the first after it.
	t.Logf("timeline: plan height %d (proposal passed by %d); node 3 stopped at %d; blocks %d..%d at %s %s %s %s (the halt: %s from H+1 to H+2)",
		upgradeAt, passedAt, lateStopped, upgradeAt, upgradeAt+3, blockTime(t, n, upgradeAt), blockTime(t, n, upgradeAt+1),
		blockTime(t, n, upgradeAt+2), blockTime(t, n, upgradeAt+3), n.BlockTimes(upgradeAt+1, upgradeAt+2))
	logCosmovisor(t, n, 0)
	if oldAnswered == 0 {
		t.Errorf("the previous release's load driver finished nothing before the halt:\n%s", oldLoad.Output())
	}

	// The late node: cosmovisor runs the old binary up to H, then this one.
	if out, err := n.Script(5*time.Minute, "start"); err != nil {
		t.Fatalf("start node 3: %v\n%s", err, out)
	}
	joined := time.Now()
	waitUpgraded(t, n, 3, app.UpgradeV2, upgradeAt, 3*time.Minute)
	n.WaitCaughtUp(3, 3*time.Minute)
	t.Logf("node 3 joined late: caught up at %d in %s", n.HeightOn(3), time.Since(joined).Round(time.Second))
	logCosmovisor(t, n, 3) // which of cosmovisor and cosmovisor-run.sh made the switch

	// The export before: the previous release on cosmovisor's backup of
	// node 0's data, the state of the last block it ran (H-1).
	before := ln.Export(t, prev.Inferenced(), backupHome(t, n, 0), 0)

	// Traffic on the new binary: the old agent registers (the migration
	// invents none) and the load driver plays it.
	bond := n.TransferAgentMinBond()
	if code, log := n.Tx("agent", "inference", "register-transfer-agent", bond); code != 0 {
		t.Fatalf("register the agent after the upgrade: code %d: %s", code, log)
	}
	load := n.StartLoad(3, "new", 10*time.Minute, ln.AsAgents("agent"))
	loadFrom := n.Height()

	// The breaker on the new binary: the executor dark since before the
	// upgrade comes back through a probe, then a fresh outage is excluded
	// within 3 blocks. (Both out at once would exceed
	// health_cb_max_excluded_weight_pct with 4 executors.)
	dark.Up().AwaitRecovery(3 * time.Minute)
	t.Logf("new binary: exec3 (excluded before the upgrade) healthy at %d by %s", dark.HealthyAt, dark.RestoredBy)
	fresh := n.Outage(2).Dark().AwaitExclusion(0, 2*time.Minute).Evidence()
	// Counted as tests/e2e counts it: from the first block of the outage.
	blocks := fresh.ExcludedAt - (fresh.DarkAt + 1)
	t.Logf("new binary: exec2 dark from block %d, excluded at %d (%d blocks, %s evidence)", fresh.DarkAt+1, fresh.ExcludedAt, blocks, fresh.Kind)
	if blocks > 3 {
		t.Errorf("exec2 excluded %d blocks after its first dark block, want within 3", blocks)
	}
	fresh.Up().AwaitRecovery(3 * time.Minute)
	t.Logf("new binary: exec2 healthy again at %d by %s", fresh.HealthyAt, fresh.RestoredBy)

	// The driver's settle (waiting out the 20-block expiry of what it
	// started) outlasts Stop's grace: an interrupted settle is expected,
	// the chain's outcomes below are what count.
	if err := load.Stop(); err != nil {
		t.Logf("load driver stopped before it settled: %v", err)
	}
	newAnswered := answered(load.Events(), loadFrom, 1<<62)
	if newAnswered == 0 {
		t.Errorf("the load driver finished nothing after the upgrade:\n%s", load.Output())
	}
	t.Logf("load: %d inferences finished before the halt (previous release's driver), %d after (this release's)", oldAnswered, newAnswered)

	// The inferences open at the halt expire on this release, from the
	// expiry queue the migration rebuilt.
	for _, id := range open {
		n.Eventually("inference "+id+" expired", 2*time.Minute, func() error {
			if inf := n.Inference(starter, id); inf.Status != ln.Expired {
				return fmt.Errorf("%s %s (expires at %s)", id, inf.Status, inf.ExpirationHeight)
			}
			return nil
		})
	}
	t.Logf("the %d inferences open at the halt expired on this release", len(open))

	// The export after: node 2 stopped for it, at the upgrade height.
	n.StopNode(2)
	after := ln.Export(t, filepath.Join(bins, "inferenced"), filepath.Join(n.Home, "node2"), upgradeAt)
	if out, err := n.Script(5*time.Minute, "start"); err != nil {
		t.Fatalf("restart node 2: %v\n%s", err, out)
	}
	writeArtifact(t, "export-before.json", before)
	writeArtifact(t, "export-after.json", after)
	c, err := compareExports(before, after, defaultParams(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range c.Summary {
		t.Logf("export diff: %s", line)
	}
	for _, p := range c.Problems {
		t.Errorf("export diff: %s", p)
	}

	// Every node, the same app hash at every height from the halt on.
	n.WaitCaughtUp(2, 2*time.Minute)
	top := min(n.HeightOn(0), n.HeightOn(1), n.HeightOn(2), n.HeightOn(3))
	if err := n.SameAppHashes(upgradeAt-2, top, 1, 2, 3); err != nil {
		t.Fatal(err)
	}
	t.Logf("app hashes equal on 4 nodes at every height %d..%d", upgradeAt-2, top)
}

// waitUpgraded waits until validator i has halted at the plan height (its
// data/upgrade-info.json names the upgrade) and cosmovisor has switched it
// to the upgrade's binary (cosmovisor/current -> upgrades/<name>), and
// until it serves blocks past the plan height again.
func waitUpgraded(t *testing.T, n *ln.Net, i int, name string, height int64, timeout time.Duration) {
	t.Helper()
	home := filepath.Join(n.Home, fmt.Sprintf("node%d", i))
	n.Eventually(fmt.Sprintf("node %d on %s", i, name), timeout, func() error {
		var info struct {
			Name   string `json:"name"`
			Height int64  `json:"height"`
		}
		bz, err := os.ReadFile(filepath.Join(home, "data", "upgrade-info.json"))
		if err != nil {
			return err
		}
		if err := json.Unmarshal(bz, &info); err != nil || info.Name != name || info.Height != height {
			return fmt.Errorf("upgrade-info.json %s (%v), want %s at %d", bz, err, name, height)
		}
		link, err := os.Readlink(filepath.Join(home, "cosmovisor", "current"))
		if err != nil {
			return err
		}
		if filepath.Base(link) != name {
			return fmt.Errorf("cosmovisor/current -> %s", link)
		}
		if h := n.HeightOn(i); h <= height {
			return fmt.Errorf("node %d at %d", i, h)
		}
		return nil
	})
}

// logCosmovisor logs what cosmovisor said about the upgrade on validator
// i (its lines in the node's log), the halt's own timeline.
func logCosmovisor(t *testing.T, n *ln.Net, i int) {
	t.Helper()
	bz, err := os.ReadFile(filepath.Join(n.Home, "logs", fmt.Sprintf("node%d.log", i)))
	if err != nil {
		t.Logf("node %d log: %v", i, err)
		return
	}
	for _, line := range strings.Split(string(bz), "\n") {
		if strings.Contains(line, "module=cosmovisor") || strings.Contains(line, "cosmovisor-run:") {
			t.Logf("node %d: %s", i, line)
		}
	}
}

// backupHome is a scratch home for the previous release's export: node i's
// config and the data backup cosmovisor took at the halt.
func backupHome(t *testing.T, n *ln.Net, i int) string {
	t.Helper()
	node := filepath.Join(n.Home, fmt.Sprintf("node%d", i))
	backups, _ := filepath.Glob(filepath.Join(node, "data-backup-*"))
	if len(backups) != 1 {
		t.Fatalf("node %d: %d cosmovisor data backups (%v), want 1", i, len(backups), backups)
	}
	home := t.TempDir()
	for _, cp := range [][2]string{{filepath.Join(node, "config"), filepath.Join(home, "config")}, {backups[0], filepath.Join(home, "data")}} {
		if out, err := exec.Command("cp", "-r", cp[0], cp[1]).CombinedOutput(); err != nil {
			t.Fatalf("copy %s: %v\n%s", cp[0], err, out)
		}
	}
	return home
}

// answered counts the driver's requests in [from, to) whose executor
// answered and whose finish the driver sent.
func answered(events []ln.LoadEvent, from, to int64) int {
	k := 0
	for _, ev := range events {
		if ev.Outcome == "answered" && ev.Height >= from && ev.Height < to {
			k++
		}
	}
	return k
}

func blockTime(t *testing.T, n *ln.Net, h int64) string {
	t.Helper()
	return n.BlockTime(h).UTC().Format("15:04:05.000")
}

// defaultParams is this release's default params as the export spells
// them (proto JSON, field names as in the .proto).
func defaultParams(t *testing.T) map[string]json.RawMessage {
	t.Helper()
	p := inferencetypes.DefaultParams()
	bz, err := codec.NewProtoCodec(codectypes.NewInterfaceRegistry()).MarshalJSON(&p)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(bz, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// writeArtifact keeps a file of the run where UPGRADE_ARTIFACTS says (for
// the closing figures), nowhere otherwise.
func writeArtifact(t *testing.T, name string, bz []byte) {
	dir := os.Getenv("UPGRADE_ARTIFACTS")
	if dir == "" {
		return
	}
	if err := os.WriteFile(filepath.Join(dir, name), bz, 0o644); err != nil {
		t.Logf("artifact %s: %v", name, err)
	}
}
