package localnet_test

import (
	"context"
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	ln "github.com/inferenced/inferenced/tests/internal/localnet"
)

// A newcomer's `scripts/localnet.sh start` with an epoch no longer than
// the breaker's longest cooldown: the binary refuses the genesis (gentx
// validates it), and the script must say why. It printed "initialising"
// and exited 1, the binary's error hidden with its output. Nothing is
// started (the failure is in init); the cleanup stops the network anyway
// in case a regression let it start.
func TestLocalnetStartSaysWhyItsGenesisIsInvalid(t *testing.T) {
	if testing.Short() {
		t.Skip("runs scripts/localnet.sh with the built binaries")
	}
	cfg := ln.DefaultConfig()
	cfg.PortOffset = 5100
	cfg.EpochLength, cfg.MaxCooldown = 50, 80
	root, home := ln.RepoRoot(t), filepath.Join(t.TempDir(), "net")
	env := ln.ScriptEnv(t, cfg, home)
	script := filepath.Join(root, "scripts", "localnet.sh")
	run := func(timeout time.Duration, arg string) (string, error) {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		cmd := exec.CommandContext(ctx, "bash", script, arg)
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	t.Cleanup(func() {
		if out, err := run(2*time.Minute, "stop"); err != nil {
			t.Logf("localnet stop: %v\n%s", err, out)
		}
	})
	out, err := run(3*time.Minute, "start")
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Fatalf("start with EPOCH_LENGTH=50 CB_MAX_COOLDOWN=80: %v, want exit status 1\n%s", err, out)
	}
	const why = "health_cb_max_cooldown_blocks (80) must be < epoch_length (50)"
	if !strings.Contains(out, why) {
		t.Fatalf("start's output does not say %q:\n%s", why, out)
	}
	if strings.Contains(out, "Usage:") {
		t.Errorf("start's output repeats the binary's usage text:\n%s", out)
	}
}
