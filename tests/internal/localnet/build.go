package localnet

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

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

// binaryNames are the commands a network runs (cmd/<name>), built by
// `make build` into LOCALNET_BIN_DIR.
var binaryNames = []string{"inferenced", "fake-executor", "loadgen", "localnet-keys"}

// Binaries is the directory holding the binaries a network runs
// (binaryNames) for a test that runs the scripts itself (see binaries).
func Binaries(t *testing.T) string { return binaries(t, repoRoot(t)) }

// RepoRoot is the repository's root directory, where scripts/ lives.
func RepoRoot(t *testing.T) string { return repoRoot(t) }

// binaries returns LOCALNET_BIN_DIR (set by `make test`) or builds
// binaryNames into a temporary directory.
func binaries(t *testing.T, root string) string {
	if dir := os.Getenv("LOCALNET_BIN_DIR"); dir != "" {
		return dir
	}
	dir := t.TempDir()
	for _, name := range binaryNames {
		cmd := exec.Command("go", "build", "-o", filepath.Join(dir, name), "./cmd/"+name)
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("build %s: %v\n%s", name, err, out)
		}
	}
	return dir
}
