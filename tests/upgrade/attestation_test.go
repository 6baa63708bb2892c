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

// TestUpgradeEnablesAttestation: a chain of the release before v2
// (PREVIOUS_RELEASE_V2) that started without vote extensions (traffic
// samples only) takes the v2 upgrade with the binary swapped by hand,
// without cosmovisor: the handler enables extensions from the block after
// the upgrade, the first health bundle, in the block after that, is in the
// HEALTH3 layout (migration 6 ran in the same block), and the validators'
// attestations reach the breaker.
func TestUpgradeEnablesAttestation(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a 4-validator network; run without -short")
	}
	prev := ln.BuildRelease(t, ln.PreviousReleaseV2(t))
	cfg := ln.DefaultConfig()
	cfg.PortOffset = 4800
	cfg.Executors = 2
	cfg.InitialCooldown, cfg.MaxCooldown = 0, 0 // the script's: the breaker is not under test
	cfg.VEEnableHeight = ln.Int64(0)
	cfg.Inferenced = prev.Inferenced()
	cfg.InitScript = prev.InitScript()
	n := ln.Start(t, cfg)
	n.WaitHeight(3, time.Minute)
	// The 20 s voting period is about 35 blocks here; 70 leave room.
	upgradeAt := n.Height() + 70
	plan := map[string]any{"@type": "/cosmos.upgrade.v1beta1.MsgSoftwareUpgrade", "authority": n.GovAddress(),
		"plan": map[string]any{"name": app.UpgradeV2, "height": fmt.Sprint(upgradeAt)}}
	n.PassProposal(n.ProposalFile("Upgrade to "+app.UpgradeV2, "Enable attestation.", plan), 2*time.Minute)
	n.WaitHeight(upgradeAt-1, 3*time.Minute)
	halted := n.WaitForHalt(upgradeAt-1, 3*time.Second, time.Minute)
	// CometBFT stores the decided block before the application runs it,
	// so the halted chain reports the upgrade height itself.
	t.Logf("previous release halted at %d (upgrade height %d); restarting on this release", halted, upgradeAt)
	if halted != upgradeAt {
		t.Fatalf("halted at block %d, want the upgrade height %d", halted, upgradeAt)
	}
	n.RestartWith(filepath.Join(n.Bins, "inferenced"))
	n.WaitHeight(upgradeAt+8, 2*time.Minute)

	var cp struct {
		Result struct {
			ConsensusParams struct {
				Abci struct {
					Enable string `json:"vote_extensions_enable_height"`
				} `json:"abci"`
			} `json:"consensus_params"`
		} `json:"result"`
	}
	if err := n.GetJSON(fmt.Sprintf("%s/consensus_params?height=%d", n.RPC(0), upgradeAt+2), &cp); err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprint(upgradeAt + 1); cp.Result.ConsensusParams.Abci.Enable != want {
		t.Fatalf("vote extensions enable height %q, want %s", cp.Result.ConsensusParams.Abci.Enable, want)
	}
	for h := upgradeAt - 1; h <= upgradeAt+1; h++ {
		if n.HasBundle(h) {
			t.Errorf("block %d carries a health bundle before extensions exist", h)
		}
	}
	attested := int64(0)
	for h := upgradeAt + 2; h <= upgradeAt+8; h++ {
		if !n.HasBundle(h) {
			t.Errorf("block %d has no health bundle", h)
		} else if layout, _ := n.BundleLayout(h); layout != proposals.LayoutV3 {
			t.Errorf("block %d carries %s, want HEALTH3", h, layout)
		}
		line := n.BundleLine(h, n.ExecutorAddr(0))
		t.Logf("  %5d  bundle: %s", h, line)
		if attested == 0 && strings.HasPrefix(line, "sample ok") {
			attested = h
		}
	}
	t.Logf("upgrade at %d; extensions from %d; first bundle %d; first attested ok for exec0 at %d",
		upgradeAt, upgradeAt+1, upgradeAt+2, attested)
	if attested == 0 {
		t.Errorf("no attested ok for a healthy executor within 7 blocks of the first bundle")
	}
}
