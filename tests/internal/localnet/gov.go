package localnet

import (
	"encoding/json"
	"fmt"
	"os"
	"time"
)

// proposalDeposit is the deposit of the harness's proposals: the genesis
// minimum, so voting starts at submission.
const proposalDeposit = "10000stake"

// GovAddress is the x/gov module account, the authority of governance
// messages.
func (n *Net) GovAddress() string {
	n.t.Helper()
	var res struct {
		Account struct {
			Value struct {
				Address string `json:"address"`
			} `json:"value"`
		} `json:"account"`
	}
	if err := n.Query(&res, "auth", "module-account", "gov"); err != nil {
		n.t.Fatal(err)
	}
	return res.Account.Value.Address
}

// ProposalFile writes a governance proposal of msgs (each a JSON-ready
// value with its "@type") to a file for `tx gov submit-proposal` and
// returns its path.
func (n *Net) ProposalFile(title, summary string, msgs ...any) string {
	n.t.Helper()
	body, err := json.Marshal(map[string]any{
		"messages": msgs, "deposit": proposalDeposit, "title": title, "summary": summary,
	})
	if err != nil {
		n.t.Fatal(err)
	}
	f, err := os.CreateTemp(n.t.TempDir(), "proposal-*.json")
	if err != nil {
		n.t.Fatal(err)
	}
	if _, err := f.Write(body); err != nil {
		n.t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		n.t.Fatal(err)
	}
	return f.Name()
}

// PassProposal submits the proposal in file from val0, has every validator
// vote yes, and waits up to timeout until it has PASSED (its messages have
// run); it returns the proposal's id. Any refusal fails the test.
func (n *Net) PassProposal(file string, timeout time.Duration) string {
	n.t.Helper()
	if code, log := n.Tx("val0", "gov", "submit-proposal", file); code != 0 {
		n.t.Fatalf("submit proposal: code %d: %s", code, log)
	}
	var list struct {
		Proposals []struct {
			ID string `json:"id"`
		} `json:"proposals"`
	}
	if err := n.Query(&list, "gov", "proposals"); err != nil || len(list.Proposals) == 0 {
		n.t.Fatalf("proposals: %v %+v", err, list)
	}
	id := list.Proposals[len(list.Proposals)-1].ID
	for i := range n.cfg.validators() {
		v := fmt.Sprintf("val%d", i)
		if code, log := n.Tx(v, "gov", "vote", id, "yes"); code != 0 {
			n.t.Fatalf("vote of %s on proposal %s: code %d: %s", v, id, code, log)
		}
	}
	var status struct {
		Proposal struct {
			Status       string `json:"status"`
			VotingEnd    string `json:"voting_end_time"`
			FailedReason string `json:"failed_reason"`
		} `json:"proposal"`
	}
	for deadline := time.Now().Add(timeout); status.Proposal.Status != ProposalPassed; time.Sleep(time.Second) {
		if time.Now().After(deadline) {
			n.t.Fatalf("proposal %s not passed in %s: %+v", id, timeout, status.Proposal)
		}
		if err := n.Query(&status, "gov", "proposal", id); err != nil {
			n.t.Fatal(err)
		}
	}
	return id
}
