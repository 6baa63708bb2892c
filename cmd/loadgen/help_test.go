package main

import (
	"context"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// loadgen -h lists the driver's flags only. It used to list rapid's
// (-rapid.*) and gotest.tools' (-update) too: the binary linked app/ for
// its interface registry, and app/'s SDK modules import their simulation
// packages, which import test libraries that register flags when loaded.
// The binary now links app/chainconfig; this builds it and reads its -h.
func TestHelpListsOnlyTheDriversFlags(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	bin := filepath.Join(t.TempDir(), "loadgen")
	if out, err := exec.CommandContext(ctx, "go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	// -h exits 0 after printing the usage to stderr.
	out, err := exec.CommandContext(ctx, bin, "-h").CombinedOutput()
	if err != nil {
		t.Fatalf("loadgen -h: %v\n%s", err, out)
	}
	var flags []string
	for _, m := range regexp.MustCompile(`(?m)^  -(\S+)`).FindAllStringSubmatch(string(out), -1) {
		flags = append(flags, m[1])
	}
	for _, f := range flags {
		if strings.HasPrefix(f, "rapid.") || strings.HasPrefix(f, "test.") || f == "update" {
			t.Errorf("loadgen -h lists the test-only flag -%s", f)
		}
	}
	want := []string{"agent", "agents", "blocks", "chain-id", "events", "exec-timeout", "grief", "grpc",
		"keyring-dir", "model", "quiet", "rate", "run", "target"}
	if !slices.Equal(flags, want) {
		t.Errorf("loadgen -h lists %q, want %q:\n%s", flags, want, out)
	}
}
