package localnet_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// network is one localnet started by scripts/localnet.sh for a test.
type network struct {
	t       *testing.T
	root    string // repository root
	bins    string // directory with inferenced, fake-executor, loadgen
	home    string
	offset  int
	env     []string
	keysDir string
}

func repoRoot(t *testing.T) string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
}

// binaries returns LOCALNET_BIN_DIR (set by `make test`) or builds the three
// binaries into a temporary directory.
func binaries(t *testing.T, root string) string {
	if dir := os.Getenv("LOCALNET_BIN_DIR"); dir != "" {
		return dir
	}
	dir := t.TempDir()
	for _, name := range []string{"inferenced", "fake-executor", "loadgen"} {
		cmd := exec.Command("go", "build", "-o", filepath.Join(dir, name), "./cmd/"+name)
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("build %s: %v\n%s", name, err, out)
		}
	}
	return dir
}

func startNetwork(t *testing.T, offset int, extraEnv ...string) *network {
	t.Helper()
	root := repoRoot(t)
	n := &network{t: t, root: root, bins: binaries(t, root), home: t.TempDir(), offset: offset}
	n.keysDir = filepath.Join(n.home, "keys")
	n.env = append(os.Environ(),
		"LOCALNET_HOME="+n.home,
		"INFERENCED="+filepath.Join(n.bins, "inferenced"),
		"FAKE_EXECUTOR="+filepath.Join(n.bins, "fake-executor"),
		fmt.Sprintf("PORT_OFFSET=%d", offset),
	)
	n.env = append(n.env, extraEnv...)
	n.startWatchdog()
	t.Cleanup(func() {
		if out, err := n.script(2*time.Minute, "stop"); err != nil {
			t.Logf("localnet stop: %v\n%s", err, out)
		}
		if t.Failed() {
			n.dumpLogs()
		}
	})
	if out, err := n.script(5*time.Minute, "start"); err != nil {
		t.Fatalf("localnet start: %v\n%s", err, out)
	}
	return n
}

// startWatchdog stops the network if this test process dies without running
// its cleanups (a `go test -timeout` kill): the nodes run in their own
// sessions and would otherwise outlive it.
func (n *network) startWatchdog() {
	script := fmt.Sprintf("while kill -0 %d 2>/dev/null; do sleep 2; done; exec bash %q stop",
		os.Getpid(), filepath.Join(n.root, "scripts", "localnet.sh"))
	cmd := exec.Command("setsid", "bash", "-c", script)
	cmd.Env = n.env
	if err := cmd.Start(); err != nil {
		n.t.Fatalf("start watchdog: %v", err)
	}
	go func() { _ = cmd.Wait() }()
}

func (n *network) script(timeout time.Duration, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", append([]string{filepath.Join(n.root, "scripts", "localnet.sh")}, args...)...)
	cmd.Env = n.env
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func (n *network) dumpLogs() {
	logs, _ := filepath.Glob(filepath.Join(n.home, "logs", "*.log"))
	for _, l := range logs {
		bz, _ := os.ReadFile(l)
		lines := strings.Split(strings.TrimSpace(string(bz)), "\n")
		if len(lines) > 20 {
			lines = lines[len(lines)-20:]
		}
		n.t.Logf("--- %s (tail)\n%s", filepath.Base(l), strings.Join(lines, "\n"))
	}
}

func (n *network) rpcAddr() string  { return fmt.Sprintf("tcp://127.0.0.1:%d", 26657+n.offset) }
func (n *network) grpcAddr() string { return fmt.Sprintf("127.0.0.1:%d", 9090+n.offset) }
func (n *network) execURL(j int) string {
	return fmt.Sprintf("http://127.0.0.1:%d", 8080+n.offset+j)
}

// cli runs inferenced against node 0 and returns stdout.
func (n *network) cli(args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(n.bins, "inferenced"), args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), fmt.Errorf("inferenced %s: %w: %s", strings.Join(args, " "), err, stderr.String())
	}
	return stdout.String(), nil
}

// query runs an `inferenced q ...` command with JSON output into out.
func (n *network) query(out any, args ...string) error {
	args = append(append([]string{"q"}, args...), "--node", n.rpcAddr(), "--output", "json")
	raw, err := n.cli(args...)
	if err != nil {
		return err
	}
	return json.Unmarshal([]byte(raw), out)
}

// tx signs and broadcasts a transaction from key, waits for it to be
// committed, and returns its code and log.
func (n *network) tx(from string, args ...string) (uint32, string) {
	n.t.Helper()
	args = append(append([]string{"tx"}, args...), "--from", from, "--keyring-backend", "test",
		"--keyring-dir", n.keysDir, "--chain-id", "inferenced-local", "--node", n.rpcAddr(),
		"--yes", "--output", "json", "--gas", "400000")
	raw, err := n.cli(args...)
	if err != nil {
		n.t.Fatalf("%v", err)
	}
	var res struct {
		Code   uint32 `json:"code"`
		TxHash string `json:"txhash"`
		RawLog string `json:"raw_log"`
	}
	if err := json.Unmarshal([]byte(raw), &res); err != nil {
		n.t.Fatalf("decode tx response %q: %v", raw, err)
	}
	if res.Code != 0 {
		return res.Code, res.RawLog
	}
	// Poll rather than `q wait-tx`, whose subscription misses a tx that is
	// committed between its first look-up and its subscription.
	deadline := time.Now().Add(30 * time.Second)
	for {
		raw, err = n.cli("q", "tx", res.TxHash, "--node", n.rpcAddr(), "--output", "json")
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			n.t.Fatalf("tx %s not committed in 30s: %v", res.TxHash, err)
		}
		time.Sleep(250 * time.Millisecond)
	}
	if err := json.Unmarshal([]byte(raw), &res); err != nil {
		n.t.Fatalf("decode committed tx %q: %v", raw, err)
	}
	return res.Code, res.RawLog
}

func (n *network) keyAddress(name string) string {
	n.t.Helper()
	out, err := n.cli("keys", "show", name, "-a", "--keyring-backend", "test", "--keyring-dir", n.keysDir)
	if err != nil {
		n.t.Fatal(err)
	}
	return strings.TrimSpace(out)
}

// waitHeight waits until node 0 has committed height h.
func (n *network) waitHeight(h int64, timeout time.Duration) {
	n.t.Helper()
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		var st struct {
			SyncInfo struct {
				LatestBlockHeight string `json:"latest_block_height"`
			} `json:"sync_info"`
		}
		if raw, err := n.cli("status", "--node", n.rpcAddr()); err == nil && json.Unmarshal([]byte(raw), &st) == nil {
			var got int64
			fmt.Sscan(st.SyncInfo.LatestBlockHeight, &got)
			if got >= h {
				return
			}
		}
		time.Sleep(300 * time.Millisecond)
	}
	n.t.Fatalf("height %d not reached in %s", h, timeout)
}
