// Package localnet starts a real multi-process network for a test through
// scripts/localnet.sh (validators, fake executors, on 127.0.0.1 only) and
// drives it through the built binaries and the nodes' RPC: the harness
// shared by tests/localnet and tests/e2e. Every network is stopped by the
// test's cleanup, or by a watchdog if the test binary is killed first.
// README.md lists what it guarantees.
package localnet

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Net is one localnet started by scripts/localnet.sh for a test.
type Net struct {
	t     *testing.T
	root  string // repository root
	cfg   Config
	ports Ports
	env   []string
	// Bins holds the binaries (binaryNames); Home the network's
	// data; KeysDir its test keyring.
	Bins, Home, KeysDir string

	execAddrs map[int]string // ExecutorAddr's cache
}

func repoRoot(t *testing.T) string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", "..", ".."))
}

// Start starts a network of cfg for t in a temporary directory and stops
// it in t's cleanup (printing the tail of every log first if t failed).
func Start(t *testing.T, cfg Config) *Net {
	t.Helper()
	root := repoRoot(t)
	ports, err := cfg.check(root)
	if err != nil {
		t.Fatal(err)
	}
	n := &Net{t: t, root: root, cfg: cfg, ports: ports, Bins: binaries(t, root), Home: t.TempDir(), execAddrs: map[int]string{}}
	n.KeysDir = filepath.Join(n.Home, "keys")
	n.env = n.environ()
	n.startWatchdog()
	t.Cleanup(func() {
		// Logs first, while they still end at the failure rather than in
		// the shutdown's closed-connection noise.
		if t.Failed() {
			n.dumpLogs()
		}
		if out, err := n.Script(2*time.Minute, "stop"); err != nil {
			t.Logf("localnet stop: %v\n%s", err, out)
		}
	})
	if cfg.InitScript != "" {
		if out, err := n.script(cfg.InitScript, 5*time.Minute, "init"); err != nil {
			t.Fatalf("localnet init by %s: %v\n%s", cfg.InitScript, err, out)
		}
		n.writeAddresses(scriptEnvBinary(cfg, n.Bins))
	}
	if out, err := n.Script(5*time.Minute, "start"); err != nil {
		t.Fatalf("localnet start: %v\n%s", err, out)
	}
	return n
}

// environ is the script's environment for this network.
func (n *Net) environ() []string { return scriptEnv(n.cfg, n.Home, n.Bins) }

// ScriptEnv is the environment scripts/localnet.sh (and localnet-run.sh,
// which calls it) run with for a network of cfg whose data is in home: this
// process's, the binaries' paths, and cfg. Start uses the same; a test that
// runs a script itself uses this.
func ScriptEnv(t *testing.T, cfg Config, home string) []string {
	t.Helper()
	if _, err := cfg.check(repoRoot(t)); err != nil {
		t.Fatal(err)
	}
	return scriptEnv(cfg, home, Binaries(t))
}

// scriptEnvBinary is the validators' binary of a network of cfg.
func scriptEnvBinary(cfg Config, bins string) string {
	if cfg.Inferenced != "" {
		return cfg.Inferenced
	}
	return filepath.Join(bins, "inferenced")
}

func scriptEnv(cfg Config, home, bins string) []string {
	env := append(os.Environ(),
		"LOCALNET_HOME="+home,
		"INFERENCED="+scriptEnvBinary(cfg, bins),
		"FAKE_EXECUTOR="+filepath.Join(bins, "fake-executor"),
		"LOCALNET_KEYS="+filepath.Join(bins, "localnet-keys"),
		"LOADGEN="+filepath.Join(bins, "loadgen"),
		fmt.Sprintf("PORT_OFFSET=%d", cfg.PortOffset),
	)
	return append(env, cfg.env()...)
}

// startWatchdog stops the network if this test process dies without running
// its cleanups (a `go test -timeout` kill): the nodes run in their own
// sessions and would otherwise outlive it.
func (n *Net) startWatchdog() {
	script := fmt.Sprintf("while kill -0 %d 2>/dev/null; do sleep 2; done; exec bash %q stop",
		os.Getpid(), filepath.Join(n.root, "scripts", "localnet.sh"))
	cmd := exec.Command("setsid", "bash", "-c", script)
	cmd.Env = n.env
	if err := cmd.Start(); err != nil {
		n.t.Fatalf("start watchdog: %v", err)
	}
	go func() { _ = cmd.Wait() }()
}

// Script runs scripts/localnet.sh with args in the network's environment.
func (n *Net) Script(timeout time.Duration, args ...string) (string, error) {
	return n.script(filepath.Join(n.root, "scripts", "localnet.sh"), timeout, args...)
}

func (n *Net) script(path string, timeout time.Duration, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", append([]string{path}, args...)...)
	cmd.Env = n.env
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func (n *Net) dumpLogs() {
	logs, _ := filepath.Glob(filepath.Join(n.Home, "logs", "*.log"))
	for _, l := range logs {
		bz, _ := os.ReadFile(l)
		lines := strings.Split(strings.TrimSpace(string(bz)), "\n")
		if len(lines) > 20 {
			lines = lines[len(lines)-20:]
		}
		n.t.Logf("--- %s (tail)\n%s", filepath.Base(l), strings.Join(lines, "\n"))
	}
}

// RestartWith stops every process of the network and starts it again from
// its data with another inferenced binary.
func (n *Net) RestartWith(bin string) {
	n.t.Helper()
	if out, err := n.Script(2*time.Minute, "stop"); err != nil {
		n.t.Fatalf("localnet stop: %v\n%s", err, out)
	}
	n.cfg.Inferenced = bin
	n.env = n.environ()
	if out, err := n.Script(5*time.Minute, "start"); err != nil {
		n.t.Fatalf("localnet restart: %v\n%s", err, out)
	}
}

// Kill stops validator i at once (SIGKILL), as a crash would; Script
// "start" brings it back. The signal goes to the node's process group (the
// script starts each in its own session), so that under cosmovisor the
// node goes with it.
func (n *Net) Kill(i int) {
	n.t.Helper()
	if err := syscall.Kill(-n.nodePID(i), syscall.SIGKILL); err != nil {
		n.t.Fatalf("kill node %d: %v", i, err)
	}
}

// StopNode stops validator i as an operator would (SIGTERM to its process
// group, cosmovisor and node) and waits up to a minute until it is gone;
// Script "start" brings it back.
func (n *Net) StopNode(i int) {
	n.t.Helper()
	pid := n.nodePID(i)
	if err := syscall.Kill(-pid, syscall.SIGTERM); err != nil {
		n.t.Fatalf("stop node %d: %v", i, err)
	}
	for deadline := time.Now().Add(time.Minute); syscall.Kill(-pid, 0) == nil; time.Sleep(200 * time.Millisecond) {
		if time.Now().After(deadline) {
			_ = syscall.Kill(-pid, syscall.SIGKILL)
			n.t.Logf("node %d ignored SIGTERM for a minute: killed", i)
			break
		}
	}
	_ = os.Remove(n.pidFile(i))
}

func (n *Net) pidFile(i int) string {
	return filepath.Join(n.Home, "pids", fmt.Sprintf("node%d.pid", i))
}

// nodePID is validator i's process (its group leader) from its pid file.
func (n *Net) nodePID(i int) int {
	n.t.Helper()
	bz, err := os.ReadFile(n.pidFile(i))
	if err != nil {
		n.t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(bz)))
	if err != nil || pid <= 1 {
		n.t.Fatalf("node %d pid file: %q", i, bz)
	}
	return pid
}
