package localnet

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Control posts to fake executor j's control API (see cmd/fake-executor).
func (n *Net) Control(j int, path string) {
	n.t.Helper()
	res, err := httpClient.Post(n.Exec(j)+path, "", nil)
	if err != nil {
		n.t.Fatal(err)
	}
	res.Body.Close()
}

// Refuse makes fake executor j refuse every connection from now on.
func (n *Net) Refuse(j int) { n.t.Helper(); n.Control(j, "/control/dark?mode=refuse") }

// Up makes fake executor j answer again.
func (n *Net) Up(j int) { n.t.Helper(); n.Control(j, "/control/up") }

// Fail makes fake executor j fail pct% of its inferences from now on (its
// health endpoint still answers); 0 ends it.
func (n *Net) Fail(j, pct int) { n.t.Helper(); n.Control(j, fmt.Sprintf("/control/fail?pct=%d", pct)) }

// The fake executor's modes, as its control API names them.
const (
	ModeUp     = "up"
	ModeRefuse = "refuse"
	ModeHang   = "hang"
)

// Group is a set of executors and the mode they switch to, for Bulk.
type Group struct {
	Executors []int
	Mode      string // ModeUp, ModeRefuse or ModeHang
}

// Bulk switches every group's executors to its mode. With a fleet it is
// one request to the fleet's bulk control (cmd/fake-executor), so all
// switch within microseconds; otherwise one request per executor.
func (n *Net) Bulk(groups ...Group) {
	n.t.Helper()
	if !n.Fleet() {
		for _, g := range groups {
			for _, j := range g.Executors {
				if g.Mode == ModeUp {
					n.Up(j)
				} else {
					n.Control(j, "/control/dark?mode="+g.Mode)
				}
			}
		}
		return
	}
	type group struct {
		Executors string `json:"executors"`
		Mode      string `json:"mode"`
	}
	var req struct {
		Groups []group `json:"groups"`
	}
	for _, g := range groups {
		set := make([]string, len(g.Executors))
		for k, j := range g.Executors {
			set[k] = strconv.Itoa(j)
		}
		req.Groups = append(req.Groups, group{Executors: strings.Join(set, ","), Mode: g.Mode})
	}
	body, err := json.Marshal(req)
	if err != nil {
		n.t.Fatal(err)
	}
	res, err := httpClient.Post(n.Exec(0)+"/control/bulk", "application/json", bytes.NewReader(body))
	if err != nil {
		n.t.Fatalf("bulk control: %v", err)
	}
	defer res.Body.Close()
	if res.StatusCode != 200 {
		msg, _ := io.ReadAll(io.LimitReader(res.Body, 1<<10))
		n.t.Fatalf("bulk control: %s: %s", res.Status, msg)
	}
}

// ExecutorAddr is fake executor j's account address (key exec<j>).
func (n *Net) ExecutorAddr(j int) string {
	n.t.Helper()
	if a, ok := n.execAddrs[j]; ok {
		return a
	}
	n.loadAddresses()
	if a, ok := n.execAddrs[j]; ok {
		return a
	}
	a := n.KeyAddress(fmt.Sprintf("exec%d", j))
	n.execAddrs[j] = a
	return a
}

// loadAddresses reads every executor's address from the "name address"
// lines the script keeps in <home>/addresses (cmd/localnet-keys' output):
// one file read instead of a CLI call per executor.
func (n *Net) loadAddresses() {
	f, err := os.Open(filepath.Join(n.Home, "addresses"))
	if err != nil {
		return // the CLI answers instead
	}
	defer func() { _ = f.Close() }()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		name, addr, ok := strings.Cut(sc.Text(), " ")
		rest, isExec := strings.CutPrefix(name, "exec")
		if j, err := strconv.Atoi(rest); ok && isExec && err == nil {
			n.execAddrs[j] = addr
		}
	}
}

// GoDark makes executor j refuse connections right after a block is
// committed and returns that block, the last one committed while it still
// answered (see AfterCommit).
func (n *Net) GoDark(j int) int64 {
	n.t.Helper()
	return n.AfterCommit(func() { n.Refuse(j) }, func() { n.Up(j) })
}

// AfterCommit makes a change (do) right after a block is committed and
// returns that block, the last one committed before the change. Switching
// early in the block leaves the monitors the whole block interval to see
// it before the next vote extensions; if a block is committed while the
// change is made, it is undone and tried again, so the change surely
// happens during block returned+1.
func (n *Net) AfterCommit(do, undo func()) int64 {
	n.t.Helper()
	for range 20 {
		before := n.waitNextBlock()
		do()
		if n.Height() == before {
			return before
		}
		undo()
	}
	n.t.Fatal("could not make the change between two blocks")
	return 0
}
