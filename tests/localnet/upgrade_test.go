package localnet_test

import (
	"encoding/base64"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestLocalnetUpgradeEnablesAttestation: a chain that started without vote
// extensions, on a release without the health-attestation upgrade (the
// same code built with -tags noupgradehandlers), schedules the upgrade by
// governance, halts at its height, and continues on this release, whose
// upgrade handler enables vote extensions from the next block. Every block
// after that carries a health bundle, and the validators' attestations
// reach the breaker.
func TestLocalnetUpgradeEnablesAttestation(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a 4-validator network; run without -short")
	}
	prev := buildPrevious(t)
	n := startNetwork(t, 8000, "NUM_VALIDATORS=4", "NUM_EXECUTORS=2", "BLOCK_TIME=500ms", "EPOCH_LENGTH=1000",
		"VE_ENABLE_HEIGHT=0", "INFERENCED="+prev)
	n.waitHeight(3, time.Minute)
	var gov struct {
		Account struct {
			Value struct {
				Address string `json:"address"`
			} `json:"value"`
		} `json:"account"`
	}
	if err := n.query(&gov, "auth", "module-account", "gov"); err != nil {
		t.Fatal(err)
	}
	// The 20 s voting period is about 35 blocks here; 70 leave room.
	upgradeAt := n.height() + 70
	proposal := filepath.Join(t.TempDir(), "upgrade.json")
	body := fmt.Sprintf(`{"messages":[{"@type":"/cosmos.upgrade.v1beta1.MsgSoftwareUpgrade","authority":%q,
		"plan":{"name":"health-attestation","height":"%d"}}],
		"deposit":"10000stake","title":"Health attestation","summary":"Enable vote extensions."}`,
		gov.Account.Value.Address, upgradeAt)
	if err := os.WriteFile(proposal, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, log := n.tx("val0", "gov", "submit-proposal", proposal); code != 0 {
		t.Fatalf("submit upgrade proposal: code %d: %s", code, log)
	}
	for _, v := range []string{"val0", "val1", "val2", "val3"} {
		if code, log := n.tx(v, "gov", "vote", "1", "yes"); code != 0 {
			t.Fatalf("vote of %s: code %d: %s", v, code, log)
		}
	}
	n.waitHeight(upgradeAt-1, 3*time.Minute)
	halted := n.waitForHalt(upgradeAt-1, 3*time.Second, time.Minute)
	// CometBFT stores the decided block before the application runs it,
	// so the halted chain reports the upgrade height itself.
	t.Logf("previous release halted at %d (upgrade height %d); restarting on this release", halted, upgradeAt)
	if halted != upgradeAt {
		t.Fatalf("halted at block %d, want the upgrade height %d", halted, upgradeAt)
	}
	n.restartWith(filepath.Join(n.bins, "inferenced"))
	n.waitHeight(upgradeAt+8, 2*time.Minute)

	var cp struct {
		Result struct {
			ConsensusParams struct {
				Abci struct {
					Enable string `json:"vote_extensions_enable_height"`
				} `json:"abci"`
			} `json:"consensus_params"`
		} `json:"result"`
	}
	if err := n.getJSON(fmt.Sprintf("http://127.0.0.1:%d/consensus_params?height=%d", 26657+n.offset, upgradeAt+2), &cp); err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprint(upgradeAt + 1); cp.Result.ConsensusParams.Abci.Enable != want {
		t.Fatalf("vote extensions enable height %q, want %s", cp.Result.ConsensusParams.Abci.Enable, want)
	}
	for h := upgradeAt - 1; h <= upgradeAt+1; h++ {
		if n.hasBundle(h) {
			t.Errorf("block %d carries a health bundle before extensions exist", h)
		}
	}
	attested := int64(0)
	for h := upgradeAt + 2; h <= upgradeAt+8; h++ {
		if !n.hasBundle(h) {
			t.Errorf("block %d has no health bundle", h)
		}
		line := n.bundleLine(h, n.keyAddress("exec0"))
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

// hasBundle reports whether the first transaction of block h is a health
// bundle.
func (n *network) hasBundle(h int64) bool {
	n.t.Helper()
	var blk struct {
		Result struct {
			Block struct {
				Data struct {
					Txs []string `json:"txs"`
				} `json:"data"`
			} `json:"block"`
		} `json:"result"`
	}
	if err := n.getJSON(fmt.Sprintf("http://127.0.0.1:%d/block?height=%d", 26657+n.offset, h), &blk); err != nil {
		n.t.Fatal(err)
	}
	if len(blk.Result.Block.Data.Txs) == 0 {
		return false
	}
	raw, err := base64.StdEncoding.DecodeString(blk.Result.Block.Data.Txs[0])
	return err == nil && strings.HasPrefix(string(raw), "\xffHEALTH1")
}

// buildPrevious builds inferenced without upgrade handlers: the release
// before the health-attestation upgrade, as far as x/upgrade can tell.
func buildPrevious(t *testing.T) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "inferenced-prev")
	cmd := exec.Command("go", "build", "-tags", "noupgradehandlers", "-o", out, "./cmd/inferenced")
	cmd.Dir = repoRoot(t)
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build the previous release: %v\n%s", err, msg)
	}
	return out
}

// waitForHalt waits until the chain has made no block for quiet, and
// returns the last height.
func (n *network) waitForHalt(from int64, quiet, timeout time.Duration) int64 {
	n.t.Helper()
	last, since := from, time.Now()
	for deadline := time.Now().Add(timeout); time.Now().Before(deadline); time.Sleep(250 * time.Millisecond) {
		if h := n.height(); h != last {
			last, since = h, time.Now()
			continue
		}
		if time.Since(since) >= quiet {
			return last
		}
	}
	n.t.Fatalf("chain still making blocks after %s (at %d)", timeout, last)
	return 0
}

// restartWith stops every process of the network and starts it again from
// its data with another inferenced binary.
func (n *network) restartWith(bin string) {
	n.t.Helper()
	if out, err := n.script(2*time.Minute, "stop"); err != nil {
		n.t.Fatalf("localnet stop: %v\n%s", err, out)
	}
	n.env = append(n.env, "INFERENCED="+bin)
	if out, err := n.script(5*time.Minute, "start"); err != nil {
		n.t.Fatalf("localnet restart: %v\n%s", err, out)
	}
}
