package upgrade_test

import (
	"encoding/json"
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

// cometVersion is the CometBFT version node i runs (its /status).
func cometVersion(t *testing.T, n *ln.Net, i int) string {
	t.Helper()
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
	return st.Result.NodeInfo.Version
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
