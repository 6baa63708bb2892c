package localnet

import "fmt"

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

// ExecutorAddr is fake executor j's account address (key exec<j>).
func (n *Net) ExecutorAddr(j int) string {
	n.t.Helper()
	if a, ok := n.execAddrs[j]; ok {
		return a
	}
	a := n.KeyAddress(fmt.Sprintf("exec%d", j))
	n.execAddrs[j] = a
	return a
}

// GoDark makes executor j refuse connections right after a block is
// committed and returns that block, the last one committed while it still
// answered. Switching early in the block leaves the monitors the whole
// block interval to see the outage before the next vote extensions; if a
// block is committed while the switch is made, it is undone and tried
// again, so the outage surely begins during block darkAt+1.
func (n *Net) GoDark(j int) int64 {
	n.t.Helper()
	for range 20 {
		before := n.waitNextBlock()
		n.Refuse(j)
		if n.Height() == before {
			return before
		}
		n.Up(j)
	}
	n.t.Fatal("could not switch the executor off between two blocks")
	return 0
}
