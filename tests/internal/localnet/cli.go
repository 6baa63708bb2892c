package localnet

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

var httpClient = &http.Client{Timeout: 3 * time.Second}

// CLI runs inferenced against node 0 and returns stdout.
func (n *Net) CLI(args ...string) (string, error) {
	return n.cli(filepath.Join(n.Bins, "inferenced"), args...)
}

func (n *Net) cli(bin string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), fmt.Errorf("inferenced %s: %w: %s", strings.Join(args, " "), err, stderr.String())
	}
	return stdout.String(), nil
}

// Query runs an `inferenced q ...` command with JSON output into out.
func (n *Net) Query(out any, args ...string) error {
	args = append(append([]string{"q"}, args...), "--node", n.RPCAddr(), "--output", "json")
	raw, err := n.CLI(args...)
	if err != nil {
		return err
	}
	return json.Unmarshal([]byte(raw), out)
}

// Tx signs and broadcasts a transaction from key, waits for it to be
// committed, and returns its code and log. A transaction the CLI refuses
// to send (a client-side check) is returned as code 1 with the CLI's error.
func (n *Net) Tx(from string, args ...string) (uint32, string) {
	n.t.Helper()
	r := n.TxResult(from, args...)
	return r.Code, r.Log
}

// TxResult is a committed (or refused) transaction as Tx sees it.
type TxResult struct {
	Code    uint32
	Log     string
	GasUsed int64 // 0 for a transaction refused before a block ran it
}

// TxResult is Tx with the gas the transaction used.
func (n *Net) TxResult(from string, args ...string) TxResult {
	n.t.Helper()
	return n.txResult(filepath.Join(n.Bins, "inferenced"), from, args...)
}

// TxOf is Tx signed and sent by another release's CLI, whose messages
// that release's chain knows.
func (n *Net) TxOf(r Release, from string, args ...string) (uint32, string) {
	n.t.Helper()
	res := n.txResult(r.Inferenced(), from, args...)
	return res.Code, res.Log
}

func (n *Net) txResult(bin, from string, args ...string) TxResult {
	n.t.Helper()
	args = append(append([]string{"tx"}, args...), "--from", from, "--keyring-backend", "test",
		"--keyring-dir", n.KeysDir, "--chain-id", "inferenced-local", "--node", n.RPCAddr(),
		"--yes", "--output", "json", "--gas", "400000")
	raw, err := n.cli(bin, args...)
	if err != nil {
		return TxResult{Code: 1, Log: err.Error()}
	}
	var res struct {
		Code    uint32 `json:"code"`
		TxHash  string `json:"txhash"`
		RawLog  string `json:"raw_log"`
		GasUsed string `json:"gas_used"`
	}
	if err := json.Unmarshal([]byte(raw), &res); err != nil {
		n.t.Fatalf("decode tx response %q: %v", raw, err)
	}
	if res.Code != 0 {
		return TxResult{Code: res.Code, Log: res.RawLog}
	}
	// Poll rather than `q wait-tx`, whose subscription misses a tx that is
	// committed between its first look-up and its subscription.
	deadline := time.Now().Add(30 * time.Second)
	for {
		raw, err = n.CLI("q", "tx", res.TxHash, "--node", n.RPCAddr(), "--output", "json")
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
	gas, _ := strconv.ParseInt(res.GasUsed, 10, 64)
	return TxResult{Code: res.Code, Log: res.RawLog, GasUsed: gas}
}

// KeyAddress is the address of key name in the network's keyring.
func (n *Net) KeyAddress(name string) string {
	n.t.Helper()
	out, err := n.CLI("keys", "show", name, "-a", "--keyring-backend", "test", "--keyring-dir", n.KeysDir)
	if err != nil {
		n.t.Fatal(err)
	}
	return strings.TrimSpace(out)
}

// GetJSON reads url (the latest state) into out.
func (n *Net) GetJSON(url string, out any) error { return getJSONAt(url, 0, out) }

// getJSONAt reads url as of the state committed at height (0: the latest)
// through the gRPC gateway's height header, so that a reading taken just
// as a block commits still describes the block the test asked about.
func getJSONAt(url string, height int64, out any) error {
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	if height > 0 {
		req.Header.Set("x-cosmos-block-height", strconv.FormatInt(height, 10))
	}
	res, err := httpClient.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", url, res.Status)
	}
	return json.NewDecoder(res.Body).Decode(out)
}

// Atoi parses a decimal number from the chain's JSON (int64 fields are
// strings there); "" is 0, anything else not a number fails the test.
func Atoi(t *testing.T, s string) int64 {
	if s == "" {
		return 0
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		t.Fatalf("not a number: %q", s)
	}
	return v
}
