package upgrade_test

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	ln "github.com/inferenced/inferenced/tests/internal/localnet"
)

// moduleVersions is x/upgrade's module version map on node i, by module
// name.
func moduleVersions(t *testing.T, n *ln.Net, i int) map[string]string {
	t.Helper()
	var out struct {
		ModuleVersions []struct {
			Name    string `json:"name"`
			Version string `json:"version"`
		} `json:"module_versions"`
	}
	if err := n.GetJSON(n.REST(i)+"/cosmos/upgrade/v1beta1/module_versions", &out); err != nil {
		t.Fatalf("module versions on node %d: %v", i, err)
	}
	vm := make(map[string]string, len(out.ModuleVersions))
	for _, m := range out.ModuleVersions {
		vm[m.Name] = m.Version
	}
	return vm
}

// stack is what node i runs: the Cosmos SDK and CometBFT modules its
// binary was built with (`inferenced version --long`, the binary cosmovisor
// runs now) and the version its /status reports (CometBFT v0.40.0 reports
// "0.39.0": its fallback version string was not bumped, so the build is
// the authority).
type stack struct{ SDK, Comet, Status string }

func stackVersions(t *testing.T, n *ln.Net, i int) stack {
	t.Helper()
	bin := filepath.Join(n.NodeHome(i), "cosmovisor", "current", "bin", "inferenced")
	out, err := exec.Command(bin, "version", "--long").CombinedOutput()
	if err != nil {
		t.Fatalf("%s version --long: %v\n%s", bin, err, out)
	}
	var s stack
	for _, line := range strings.Split(string(out), "\n") {
		if v, ok := strings.CutPrefix(line, "cosmos_sdk_version: "); ok {
			s.SDK = strings.TrimSpace(v)
		}
		if v, ok := strings.CutPrefix(line, "- github.com/cometbft/cometbft@"); ok {
			s.Comet = strings.TrimSpace(v)
		}
	}
	var st struct {
		Result struct {
			NodeInfo struct {
				Version string `json:"version"`
			} `json:"node_info"`
		} `json:"result"`
	}
	if err := n.GetJSON(n.RPC(i)+"/status", &st); err != nil {
		t.Fatalf("status of node %d: %v", i, err)
	}
	s.Status = st.Result.NodeInfo.Version
	return s
}

// openInferences counts the inferences an export holds still open
// (started, neither finished nor expired).
func openInferences(t *testing.T, exportJSON []byte) int {
	t.Helper()
	var e export
	if err := json.Unmarshal(exportJSON, &e); err != nil {
		t.Fatalf("export: %v", err)
	}
	open := 0
	for _, inf := range e.AppState.Inference.Inferences {
		if str(inf["status"]) == "INFERENCE_STATUS_STARTED" {
			open++
		}
	}
	return open
}
