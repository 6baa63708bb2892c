package localnet

import (
	"encoding/json"
	"fmt"
	"strconv"
	"time"
)

// Height is node 0's latest committed height over RPC.
func (n *Net) Height() int64 {
	n.t.Helper()
	h, err := n.statusHeight(0)
	if err != nil {
		n.t.Fatalf("status: %v", err)
	}
	return h
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
	if err := n.GetJSON(n.RPC(i)+"/status", &st); err != nil {
		return 0, err
	}
	return strconv.ParseInt(st.Result.SyncInfo.Height, 10, 64)
}

// WaitHeight waits until node 0 has committed height h.
func (n *Net) WaitHeight(h int64, timeout time.Duration) {
	n.t.Helper()
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		var st struct {
			SyncInfo struct {
				LatestBlockHeight string `json:"latest_block_height"`
			} `json:"sync_info"`
		}
		if raw, err := n.CLI("status", "--node", n.RPCAddr()); err == nil && json.Unmarshal([]byte(raw), &st) == nil {
			var got int64
			if _, err := fmt.Sscan(st.SyncInfo.LatestBlockHeight, &got); err == nil && got >= h {
				return
			}
		}
		time.Sleep(300 * time.Millisecond)
	}
	n.t.Fatalf("height %d not reached in %s", h, timeout)
}

// waitNextBlock returns the height of the next block committed on node 0,
// as soon as it is seen.
func (n *Net) waitNextBlock() int64 {
	n.t.Helper()
	h := n.Height()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(30 * time.Millisecond) {
		if next := n.Height(); next > h {
			return next
		}
	}
	n.t.Fatalf("no block after %d in 30s", h)
	return 0
}

// WaitForHalt waits until the chain has made no block for quiet, and
// returns the last height.
func (n *Net) WaitForHalt(from int64, quiet, timeout time.Duration) int64 {
	n.t.Helper()
	last, since := from, time.Now()
	for deadline := time.Now().Add(timeout); time.Now().Before(deadline); time.Sleep(250 * time.Millisecond) {
		if h := n.Height(); h != last {
			last, since = h, time.Now()
			continue
		}
		if time.Since(since) >= quiet {
			return last
		}
	}
	n.t.Fatalf("chain still making blocks after %s (at %d)", timeout, last)
	return 0
}

// Eventually retries read every 200 ms until it succeeds, and fails the
// test after timeout with read's last error: a node a block behind the
// others cannot yet answer for the latest height.
func (n *Net) Eventually(what string, timeout time.Duration, read func() error) {
	n.t.Helper()
	var err error
	for deadline := time.Now().Add(timeout); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if err = read(); err == nil {
			return
		}
	}
	n.t.Fatalf("%s: not within %s: %v", what, timeout, err)
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
	err := n.GetJSON(fmt.Sprintf("%s/block?height=%d", n.RPC(i), h), &res)
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

// BlockTimes returns the average time between the blocks of (from, to]
// from their headers.
func (n *Net) BlockTimes(from, to int64) time.Duration {
	n.t.Helper()
	at := func(h int64) time.Time {
		b, err := n.block(0, h)
		if err != nil {
			n.t.Fatal(err)
		}
		return b.Header.Time
	}
	if to <= from {
		return 0
	}
	return at(to).Sub(at(from)) / time.Duration(to-from)
}

// BlockTime is the time in the header of block h (node 0).
func (n *Net) BlockTime(h int64) time.Time {
	n.t.Helper()
	b, err := n.block(0, h)
	if err != nil {
		n.t.Fatal(err)
	}
	return b.Header.Time
}

// SameAppHashes checks that every node of nodes serves node 0's app hash in
// the header of every block of [from, to], and says where one differs.
func (n *Net) SameAppHashes(from, to int64, nodes ...int) error {
	return n.sameAsNode0("app hash", from, to, nodes, n.AppHash)
}

// SameResultAppHashes checks that node i computed node 0's app hash when it
// executed each block of [from, to] (ResultAppHash), and says where not.
func (n *Net) SameResultAppHashes(i int, from, to int64) error {
	return n.sameAsNode0("computed app hash", from, to, []int{i}, n.ResultAppHash)
}

func (n *Net) sameAsNode0(what string, from, to int64, nodes []int, read func(i int, h int64) (string, error)) error {
	for h := from; h <= to; h++ {
		want, err := read(0, h)
		if err != nil {
			return fmt.Errorf("block %d on node 0: %w", h, err)
		}
		for _, i := range nodes {
			if got, err := read(i, h); err != nil || got != want {
				return fmt.Errorf("block %d: node %d %s %s (%v), node 0 %s", h, i, what, got, err, want)
			}
		}
	}
	return nil
}
