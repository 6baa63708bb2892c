package localnet

import "time"

// Control posts to fake executor j's control API (see cmd/fake-executor).
func (n *Net) Control(j int, path string) {
	n.t.Helper()
	res, err := httpClient.Post(n.ExecURL(j)+path, "", nil)
	if err != nil {
		n.t.Fatal(err)
	}
	res.Body.Close()
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
		n.Control(j, "/control/dark?mode=refuse")
		if n.Height() == before {
			return before
		}
		n.Control(j, "/control/up")
	}
	n.t.Fatal("could not switch the executor off between two blocks")
	return 0
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
