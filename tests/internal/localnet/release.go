package localnet

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// The commits running chains upgrade from: the release right before this
// one (the v3 upgrade) and the one before v2 (the v2 upgrade).
const (
	previousReleaseFile   = "tests/upgrade/PREVIOUS_RELEASE"
	previousReleaseV2File = "tests/upgrade/PREVIOUS_RELEASE_V2"
)

// Release is another release of this repository, built from the clone's
// own history: its source tree (for its scripts) and its binaries.
type Release struct {
	Commit string
	Tree   string // the release's source, extracted with git archive
	Bins   string // its inferenced and loadgen
}

// Inferenced is the release's node binary.
func (r Release) Inferenced() string { return filepath.Join(r.Bins, "inferenced") }

// Loadgen is the release's load driver.
func (r Release) Loadgen() string { return filepath.Join(r.Bins, "loadgen") }

// InitScript is the release's scripts/localnet.sh, for Config.InitScript.
func (r Release) InitScript() string { return filepath.Join(r.Tree, "scripts", "localnet.sh") }

var commitHash = regexp.MustCompile(`^[0-9a-f]{40}$`)

// PreviousRelease is the commit tests/upgrade/PREVIOUS_RELEASE names: the
// release right before this one, which takes the v3 upgrade.
func PreviousRelease(t *testing.T) string { t.Helper(); return releaseIn(t, previousReleaseFile) }

// PreviousReleaseV2 is the commit tests/upgrade/PREVIOUS_RELEASE_V2 names:
// the release before the v2 upgrade, which takes v2 straight to this one.
func PreviousReleaseV2(t *testing.T) string { t.Helper(); return releaseIn(t, previousReleaseV2File) }

func releaseIn(t *testing.T, file string) string {
	t.Helper()
	bz, err := os.ReadFile(filepath.Join(repoRoot(t), file))
	if err != nil {
		t.Fatal(err)
	}
	commit := strings.TrimSpace(string(bz))
	if !commitHash.MatchString(commit) {
		t.Fatalf("%s holds %q, not a full commit hash", file, commit)
	}
	return commit
}

// BuildRelease extracts commit from the repository's history into a
// temporary directory (git archive: no worktree to clean up, and the
// checkout's own files are never touched) and builds its inferenced and
// loadgen there. A clone without that commit fails the test, naming it.
func BuildRelease(t *testing.T, commit string) Release {
	t.Helper()
	root := repoRoot(t)
	r := Release{Commit: commit, Tree: filepath.Join(t.TempDir(), "src"), Bins: t.TempDir()}
	if err := os.MkdirAll(r.Tree, 0o755); err != nil {
		t.Fatal(err)
	}
	archive := exec.Command("bash", "-c", `git -C "$1" archive --format=tar "$2" | tar -x -C "$3"`, "archive", root, commit, r.Tree)
	if out, err := archive.CombinedOutput(); err != nil {
		t.Fatalf("extract release %s (a shallow clone lacks it: fetch the history): %v\n%s", commit, err, out)
	}
	for _, name := range []string{"inferenced", "loadgen"} {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		cmd := exec.CommandContext(ctx, "go", "build", "-o", filepath.Join(r.Bins, name), "./cmd/"+name)
		cmd.Dir = r.Tree
		cmd.Env = append(os.Environ(), "GOWORK=off")
		out, err := cmd.CombinedOutput()
		cancel()
		if err != nil {
			t.Fatalf("build %s of release %s: %v\n%s", name, commit, err, out)
		}
	}
	return r
}

// CosmovisorBin is the cosmovisor binary `make cosmovisor` builds: in
// LOCALNET_BIN_DIR/tools when make test set it, else built from
// tools/cosmovisor into a temporary directory.
func CosmovisorBin(t *testing.T) string {
	t.Helper()
	if dir := os.Getenv("LOCALNET_BIN_DIR"); dir != "" {
		bin := filepath.Join(dir, "tools", "cosmovisor")
		if _, err := os.Stat(bin); err == nil {
			return bin
		}
	}
	bin := filepath.Join(t.TempDir(), "cosmovisor")
	cmd := exec.Command("go", "build", "-o", bin, "cosmossdk.io/tools/cosmovisor/cmd/cosmovisor")
	cmd.Dir = filepath.Join(repoRoot(t), "tools", "cosmovisor")
	cmd.Env = append(os.Environ(), "GOWORK=off")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build cosmovisor: %v\n%s", err, out)
	}
	return bin
}

// writeAddresses writes <home>/addresses ("name address" lines, as this
// release's init does) from the keyring, for a network another release's
// script initialised.
func (n *Net) writeAddresses(bin string) {
	n.t.Helper()
	path := filepath.Join(n.Home, "addresses")
	if _, err := os.Stat(path); err == nil {
		return
	}
	out, err := exec.Command(bin, "keys", "list", "--keyring-backend", "test", "--keyring-dir", n.KeysDir, "--output", "json").Output()
	if err != nil {
		n.t.Fatalf("list keys: %v", err)
	}
	var keys []struct{ Name, Address string }
	if err := json.Unmarshal(out, &keys); err != nil {
		n.t.Fatalf("list keys: %v: %s", err, out)
	}
	var b bytes.Buffer
	for _, k := range keys {
		fmt.Fprintf(&b, "%s %s\n", k.Name, k.Address)
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		n.t.Fatal(err)
	}
}

// Export runs bin's `export` on a stopped node's home (at height, or the
// latest if 0) and returns the genesis document it writes
// (--output-document: the node's log lines go to stdout).
func Export(t *testing.T, bin, home string, height int64) []byte {
	t.Helper()
	doc := filepath.Join(t.TempDir(), "export.json")
	args := []string{"export", "--home", home, "--output-document", doc}
	if height > 0 {
		args = append(args, "--height", fmt.Sprint(height))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if out, err := exec.CommandContext(ctx, bin, args...).CombinedOutput(); err != nil {
		t.Fatalf("%s %s: %v\n%s", bin, strings.Join(args, " "), err, out)
	}
	bz, err := os.ReadFile(doc)
	if err != nil {
		t.Fatal(err)
	}
	return bz
}
