package localnet

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// HealthOn reads an executor's breaker state on validator i's REST server.
func (n *Net) HealthOn(i int, addr string) (HealthJSON, error) { return n.HealthAt(i, addr, 0) }

// HealthAt reads an executor's breaker state as of block height (0: the
// latest) on validator i's REST server.
func (n *Net) HealthAt(i int, addr string, height int64) (HealthJSON, error) {
	var res struct {
		Health HealthJSON `json:"health"`
	}
	err := getJSONAt(fmt.Sprintf("http://127.0.0.1:%d/inferenced/inference/v1/executor_health/%s", 1317+100*i+n.Offset, addr), height, &res)
	return res.Health, err
}

// HeightOn is validator i's latest committed height, 0 if it does not
// answer.
func (n *Net) HeightOn(i int) int64 {
	h, _ := n.statusHeight(i)
	return h
}

func (n *Net) statusHeight(i int) (int64, error) {
	var st struct {
		Result struct {
			SyncInfo struct {
				Height string `json:"latest_block_height"`
			} `json:"sync_info"`
		} `json:"result"`
	}
	if err := n.GetJSON(fmt.Sprintf("http://127.0.0.1:%d/status", 26657+100*i+n.Offset), &st); err != nil {
		return 0, err
	}
	return strconv.ParseInt(st.Result.SyncInfo.Height, 10, 64)
}

// blockJSON is the part of a CometBFT /block answer the tests read.
type blockJSON struct {
	Header struct {
		Time    time.Time `json:"time"`
		AppHash string    `json:"app_hash"`
	} `json:"header"`
	Data struct {
		Txs [][]byte `json:"txs"` // base64 in JSON
	} `json:"data"`
}

// block is block h as validator i serves it.
func (n *Net) block(i int, h int64) (blockJSON, error) {
	var res struct {
		Result struct {
			Block blockJSON `json:"block"`
		} `json:"result"`
	}
	err := n.GetJSON(fmt.Sprintf("http://127.0.0.1:%d/block?height=%d", 26657+100*i+n.Offset, h), &res)
	return res.Result.Block, err
}

// BlockTxs is the transactions of block h (node 0).
func (n *Net) BlockTxs(h int64) [][]byte {
	n.t.Helper()
	b, err := n.block(0, h)
	if err != nil {
		n.t.Fatal(err)
	}
	return b.Data.Txs
}

// AppHash is the app hash in the header of block h as validator i serves
// it (the state after block h-1).
func (n *Net) AppHash(i int, h int64) (string, error) {
	b, err := n.block(i, h)
	return b.Header.AppHash, err
}

// Kill stops validator i at once (SIGKILL), as a crash would; Script
// "start" brings it back.
func (n *Net) Kill(i int) {
	n.t.Helper()
	bz, err := os.ReadFile(filepath.Join(n.Home, "pids", fmt.Sprintf("node%d.pid", i)))
	if err != nil {
		n.t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(bz)))
	if err != nil {
		n.t.Fatal(err)
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		n.t.Fatalf("kill node %d: %v", i, err)
	}
}
