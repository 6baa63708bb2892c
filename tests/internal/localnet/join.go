package localnet

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// JoinMode is how a full node makes its state (scripts/localnet.sh's
// JOIN_MODE).
type JoinMode string

const (
	// BlockSync replays every block from genesis.
	BlockSync JoinMode = "block-sync"
	// StateSync restores a validator's latest snapshot, then block-syncs.
	StateSync JoinMode = "state-sync"
)

// Join makes full node i (Config.FullNodes; i from the validator count) the
// first time, as an operator joining the network would, and starts it; a
// node made before is started again from its data. With StateSync the
// light client trusts node 0's header at trustHeight (0: node 0's latest).
// opts are more of the script's settings (KeepMonitor).
func (n *Net) Join(i int, mode JoinMode, trustHeight int64, opts ...string) {
	n.t.Helper()
	env := append(append(append([]string{}, n.env...), "JOIN_MODE="+string(mode)), opts...)
	if trustHeight > 0 {
		env = append(env, fmt.Sprintf("TRUST_HEIGHT=%d", trustHeight))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", filepath.Join(n.root, "scripts", "localnet.sh"), "join", strconv.Itoa(i))
	cmd.Env = env
	if out, err := cmd.CombinedOutput(); err != nil {
		n.t.Fatalf("localnet join %d (%s): %v\n%s", i, mode, err, out)
	}
}

// SyncInfo is what node i's /status says of its blocks.
type SyncInfo struct {
	Earliest, Latest int64 // the lowest and highest block it stores
	CatchingUp       bool
}

// Sync reads node i's SyncInfo.
func (n *Net) Sync(i int) (SyncInfo, error) {
	var st struct {
		Result struct {
			SyncInfo struct {
				Earliest   string `json:"earliest_block_height"`
				Latest     string `json:"latest_block_height"`
				CatchingUp bool   `json:"catching_up"`
			} `json:"sync_info"`
		} `json:"result"`
	}
	if err := n.GetJSON(n.RPC(i)+"/status", &st); err != nil {
		return SyncInfo{}, err
	}
	s := st.Result.SyncInfo
	earliest, err1 := strconv.ParseInt(s.Earliest, 10, 64)
	latest, err2 := strconv.ParseInt(s.Latest, 10, 64)
	if err1 != nil || err2 != nil {
		return SyncInfo{}, fmt.Errorf("node %d status: heights %q, %q", i, s.Earliest, s.Latest)
	}
	return SyncInfo{Earliest: earliest, Latest: latest, CatchingUp: s.CatchingUp}, nil
}

// WaitCaughtUp waits until node i is within a block of node 0 and no
// longer catching up.
func (n *Net) WaitCaughtUp(i int, timeout time.Duration) {
	n.t.Helper()
	n.Eventually(fmt.Sprintf("node %d caught up", i), timeout, func() error {
		s, err := n.Sync(i)
		if err != nil {
			return err
		}
		if top := n.Height(); s.Latest < top-1 || s.CatchingUp {
			return fmt.Errorf("node %d at %d (catching up %v), node 0 at %d", i, s.Latest, s.CatchingUp, top)
		}
		return nil
	})
}

// ResultAppHash is the app hash node i computed itself by executing block
// h (its stored FinalizeBlock result), unlike AppHash, which is the header
// every node shares. A node that restored a snapshot has none below it.
func (n *Net) ResultAppHash(i int, h int64) (string, error) {
	var res struct {
		Result struct {
			AppHash string `json:"app_hash"`
		} `json:"result"`
	}
	if err := n.GetJSON(fmt.Sprintf("%s/block_results?height=%d", n.RPC(i), h), &res); err != nil {
		return "", err
	}
	if res.Result.AppHash == "" {
		return "", fmt.Errorf("node %d: no app hash in block %d's results", i, h)
	}
	return res.Result.AppHash, nil
}

// ModuleState is x/inference's answers on node i's REST server for each
// path under /inferenced/inference/v1/, as of height, in one string: two
// nodes with the same module state at a height give the same string.
func (n *Net) ModuleState(i int, height int64, paths ...string) (string, error) {
	var b strings.Builder
	for _, p := range paths {
		var v any
		if err := getJSONAt(n.REST(i)+"/inferenced/inference/v1/"+p, height, &v); err != nil {
			return "", fmt.Errorf("node %d %s at %d: %w", i, p, height, err)
		}
		fmt.Fprintf(&b, "%s: %v\n", p, v)
	}
	return b.String(), nil
}

// Stop stops every process of the network; Script "start" starts it again.
func (n *Net) Stop() {
	n.t.Helper()
	if out, err := n.Script(2*time.Minute, "stop"); err != nil {
		n.t.Fatalf("localnet stop: %v\n%s", err, out)
	}
}

// NodeHome is node i's home directory.
func (n *Net) NodeHome(i int) string { return filepath.Join(n.Home, fmt.Sprintf("node%d", i)) }

// Inferenced is the validators' binary.
func (n *Net) Inferenced() string { return scriptEnvBinary(n.cfg, n.Bins) }

// RestartFromGenesis resets every validator's data of the stopped network
// (`comet unsafe-reset-all`), gives each the genesis document doc, removes
// the full nodes, and starts the validators again: a chain restarted from
// its export, as README.md's "Exporting and restarting a chain" does it.
func (n *Net) RestartFromGenesis(doc []byte) {
	n.t.Helper()
	bin := n.Inferenced()
	for i := range n.cfg.validators() {
		home := n.NodeHome(i)
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		out, err := exec.CommandContext(ctx, bin, "comet", "unsafe-reset-all", "--home", home, "--keep-addr-book").CombinedOutput()
		cancel()
		if err != nil {
			n.t.Fatalf("reset node %d: %v\n%s", i, err, out)
		}
		if err := os.WriteFile(filepath.Join(home, "config", "genesis.json"), doc, 0o600); err != nil {
			n.t.Fatal(err)
		}
	}
	for i := n.cfg.validators(); i < n.cfg.validators()+n.cfg.FullNodes; i++ {
		if err := os.RemoveAll(n.NodeHome(i)); err != nil {
			n.t.Fatal(err)
		}
	}
	if out, err := n.Script(5*time.Minute, "start"); err != nil {
		n.t.Fatalf("localnet start from the export: %v\n%s", err, out)
	}
}
