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
	n := startOnRelease(t, prev, 5600, app.UpgradeV2, 20)

	oldLoad := n.StartLoadOf(prev, 3, "old", 10*time.Minute)
	dark := n.Outage(3).Refuse().AwaitExclusion(0, 2*time.Minute)
	t.Logf("previous release: exec3 dark at %d, excluded at %d", dark.DarkAt, dark.ExcludedAt)
	// val0 opens the inferences across the halt: that release has no
	// transfer agents, and the load driver does not play it.
	h := scheduleHalt(t, n, prev, oldLoad, app.UpgradeV2, "This release.", 80, "val0")
	h.joinLate(t, n)

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
	freshOutage(t, n, dark)

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
	t.Logf("load: %d inferences finished before the halt (previous release's driver), %d after (this release's)", h.OldBefore, newAnswered)
	// The inferences open at the halt expire on this release, from the
	// expiry queue the migration rebuilt.
	h.openExpired(t, n)

	after := h.exportAfter(t, n)
	writeArtifact(t, "export-before.json", before)
	writeArtifact(t, "export-after.json", after)
	c, err := compareExports(before, after, defaultParams(t))
	if err != nil {
		t.Fatal(err)
	}
	c.report(t)

	// Every node, the same app hash at every height from the halt on.
	n.WaitCaughtUp(2, 2*time.Minute)
	top := min(n.HeightOn(0), n.HeightOn(1), n.HeightOn(2), n.HeightOn(3))
	if err := n.SameAppHashes(h.At-2, top, 1, 2, 3); err != nil {
		t.Fatal(err)
	}
	t.Logf("app hashes equal on 4 nodes at every height %d..%d", h.At-2, top)
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
