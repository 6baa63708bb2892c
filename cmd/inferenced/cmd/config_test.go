package cmd

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// `inferenced config` is confix v0.1.2, built against SDK v0.50 (no later
// confix resolves here): it must still read and write this release's
// app.toml and client.toml, whose keys it does not know in advance.
func TestConfigCommandReadsAndWritesThisReleasesFiles(t *testing.T) {
	home := t.TempDir()
	if out, err := run(t, "init", "node0", "--chain-id", "test-1", "--home", home); err != nil {
		t.Fatalf("init: %v\n%s", err, out)
	}
	for _, c := range []struct{ file, key, set string }{
		{"app", "minimum-gas-prices", "0.25stake"},
		{"app", "block-executor", "sequential"}, // a key SDK v0.55 added
		{"client", "chain-id", "test-2"},
	} {
		if out, err := run(t, "config", "set", c.file, c.key, c.set, "--home", home); err != nil {
			t.Fatalf("config set %s %s: %v\n%s", c.file, c.key, err, out)
		}
		if out, err := run(t, "config", "get", c.file, c.key, "--home", home); err != nil {
			t.Fatalf("config get %s %s: %v\n%s", c.file, c.key, err, out)
		}
		// confix prints to the process's stdout, not the command's: the
		// file itself says what it wrote.
		bz, err := os.ReadFile(filepath.Join(home, "config", c.file+".toml"))
		if err != nil {
			t.Fatal(err)
		}
		if want := fmt.Sprintf("%s = %q", c.key, c.set); !strings.Contains(string(bz), want) {
			t.Errorf("%s.toml has no %s after config set", c.file, want)
		}
	}
}
