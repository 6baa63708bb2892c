package e2e_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	ln "github.com/inferenced/inferenced/tests/internal/localnet"
)

// Scenario 7, governance: a MsgUpdateParams proposal raising the breaker's
// first cooldown is submitted, voted by the four validators and passed; the
// new value is in the state of the block that executed the proposal, so
// the next block runs with it, and the next exclusion uses it. A proposal
// with invalid params is refused at submission with the rule it breaks,
// and changes nothing.
func TestGovernanceChangesHealthParams(t *testing.T) {
	cfg := ln.DefaultConfig()
	cfg.PortOffset = 4500
	n := start(t, cfg)
	n.WaitHeight(3, time.Minute)
	gov := n.GovAddress()
	params := func(height int64) map[string]any {
		var res struct {
			Params map[string]any `json:"params"`
		}
		args := []string{"inference", "params"}
		if height > 0 {
			args = append(args, "--height", fmt.Sprint(height))
		}
		if err := n.Query(&res, args...); err != nil {
			t.Fatal(err)
		}
		return res.Params
	}
	proposal := func(name string, change map[string]any) string {
		p := params(0)
		for k, v := range change {
			p[k] = v
		}
		return n.ProposalFile(name, name, map[string]any{"@type": "/inferenced.inference.v1.MsgUpdateParams",
			"authority": gov, "params": p})
	}

	// Invalid: min samples 0. Refused before any vote, state unchanged.
	before := params(0)
	code, log := n.Tx("val0", "gov", "submit-proposal", proposal("invalid", map[string]any{"health_cb_min_samples": "0"}))
	invalidErr := log
	if code == 0 {
		t.Errorf("a proposal with health_cb_min_samples 0 was accepted")
	}
	if !strings.Contains(log, "health_cb_min_samples") {
		t.Errorf("refusal does not name the rule: %s", log)
	}

	// Valid: the first cooldown 8 -> 12.
	submitted := n.Height()
	pid := n.PassProposal(proposal("cooldown", map[string]any{"health_cb_initial_cooldown_blocks": "12"}), 90*time.Second)
	// The block that executed it: the first whose state has the new value.
	var executed int64
	for h := submitted; h <= n.Height(); h++ {
		if params(h)["health_cb_initial_cooldown_blocks"] == "12" {
			executed = h
			break
		}
	}
	// The next exclusion uses it.
	ex := n.Outage(1).Dark().AwaitExclusion(0, time.Minute).Exclusion

	t.Logf("invalid proposal (health_cb_min_samples 0): refused at submission: %s", firstLine(invalidErr))
	t.Logf("valid proposal %s (first cooldown 8 -> 12): submitted at %d, passed; state of block %d is the first with 12 (block %d had %v)",
		pid, submitted, executed, executed-1, params(executed - 1)["health_cb_initial_cooldown_blocks"])
	t.Logf("next exclusion: exec1 EXCLUDED at %s with cooldown %s", ex.ExcludedAt, ex.CooldownBlocks)

	if fmt.Sprint(params(executed)) == fmt.Sprint(before) || executed == 0 {
		t.Errorf("params never changed")
	}
	if got := params(executed - 1)["health_cb_initial_cooldown_blocks"]; got != "8" {
		t.Errorf("block %d already had %v", executed-1, got)
	}
	if ex.CooldownBlocks != "12" {
		t.Errorf("exclusion after the change used cooldown %s, want 12", ex.CooldownBlocks)
	}
	if after := params(0); after["health_cb_min_samples"] != before["health_cb_min_samples"] {
		t.Errorf("the refused proposal changed min samples to %v", after["health_cb_min_samples"])
	}
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
