package localnet

import "time"

func (n *Net) Control(j int, path string) {
	n.t.Helper()
	res, err := httpClient.Post(n.ExecURL(j)+path, "", nil)
	if err != nil {
		n.t.Fatal(err)
	}
	res.Body.Close()
}

// GoDark makes executor j refuse connections within one block and returns
// that block's predecessor, the last block committed while it still
// answered: if a block is committed while the switch is made, it is undone
// and tried again, so the outage surely begins during block darkAt+1.
func (n *Net) GoDark(j int) int64 {
	n.t.Helper()
	for range 20 {
		before := n.Height()
		n.Control(j, "/control/dark?mode=refuse")
		if n.Height() == before {
			return before
		}
		n.Control(j, "/control/up")
		time.Sleep(200 * time.Millisecond)
	}
	n.t.Fatal("could not switch the executor off between two blocks")
	return 0
}
