// Package localnet starts a real multi-process network for a test through
// scripts/localnet.sh (validators, fake executors, on 127.0.0.1 only) and
// drives it through the built binaries and the nodes' RPC: the harness
// shared by tests/localnet and tests/e2e. Every network is stopped by the
// test's cleanup, or by a watchdog if the test binary is killed first.
package localnet

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// Net is one localnet started by scripts/localnet.sh for a test.
type Net struct {
	t    *testing.T
	root string // repository root
	env  []string
	// Bins holds inferenced, fake-executor and loadgen; Home the network's
	// data; KeysDir its test keyring. Offset shifts every port.
	Bins, Home, KeysDir string
	Offset              int
}

func repoRoot(t *testing.T) string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", "..", ".."))
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

func Start(t *testing.T, offset int, extraEnv ...string) *Net {
	t.Helper()
	root := repoRoot(t)
	n := &Net{t: t, root: root, Bins: binaries(t, root), Home: t.TempDir(), Offset: offset}
	n.KeysDir = filepath.Join(n.Home, "keys")
	n.env = append(os.Environ(),
		"LOCALNET_HOME="+n.Home,
		"INFERENCED="+filepath.Join(n.Bins, "inferenced"),
		"FAKE_EXECUTOR="+filepath.Join(n.Bins, "fake-executor"),
		fmt.Sprintf("PORT_OFFSET=%d", offset),
	)
	n.env = append(n.env, extraEnv...)
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
	if out, err := n.Script(5*time.Minute, "start"); err != nil {
		t.Fatalf("localnet start: %v\n%s", err, out)
	}
	return n
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

func (n *Net) Script(timeout time.Duration, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", append([]string{filepath.Join(n.root, "scripts", "localnet.sh")}, args...)...)
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

func (n *Net) RPCAddr() string { return fmt.Sprintf("tcp://127.0.0.1:%d", 26657+n.Offset) }

func (n *Net) GRPCAddr() string { return fmt.Sprintf("127.0.0.1:%d", 9090+n.Offset) }

func (n *Net) ExecURL(j int) string {
	return fmt.Sprintf("http://127.0.0.1:%d", 8080+n.Offset+j)
}

// BuildPrevious builds inferenced without upgrade handlers: the release
// before the health-attestation upgrade, as far as x/upgrade can tell.
func BuildPrevious(t *testing.T) string { return BuildTagged(t, "noupgradehandlers") }

// BuildLying builds inferenced with the test-only lying vote extensions
// (app/lying_on.go), switched on per process by INFERENCED_LIE.
func BuildLying(t *testing.T) string { return BuildTagged(t, "lying") }

// BuildTagged builds inferenced with a build tag into a temporary
// directory.
func BuildTagged(t *testing.T, tag string) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "inferenced-"+tag)
	cmd := exec.Command("go", "build", "-tags", tag, "-o", out, "./cmd/inferenced")
	cmd.Dir = repoRoot(t)
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build inferenced -tags %s: %v\n%s", tag, err, msg)
	}
	return out
}

// RestartWith stops every process of the network and starts it again from
// its data with another inferenced binary.
func (n *Net) RestartWith(bin string) {
	n.t.Helper()
	if out, err := n.Script(2*time.Minute, "stop"); err != nil {
		n.t.Fatalf("localnet stop: %v\n%s", err, out)
	}
	n.env = append(n.env, "INFERENCED="+bin)
	if out, err := n.Script(5*time.Minute, "start"); err != nil {
		n.t.Fatalf("localnet restart: %v\n%s", err, out)
	}
}
