// Package localnet_test drives a real multi-process localnet: the built
// binaries, scripts/localnet.sh and the load driver, on 127.0.0.1 only.
package localnet_test

import (
	"strings"
	"testing"
	"time"

	ln "github.com/inferenced/inferenced/tests/internal/localnet"
)

// TestLocalnetSmoke starts 4 validators and 2 executors as separate
// processes, registers an executor, runs inferences by CLI and by the load
// driver (one finishing, one expiring, a dark executor), checks the stats,
// and stops the network.
func TestLocalnetSmoke(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a 4-validator network; run without -short")
	}
	cfg := ln.DefaultConfig() // its epoch: no boundary may reset the stats under test
	cfg.PortOffset = 5000
	cfg.Executors, cfg.ExpirationBlocks = 2, 8
	cfg.InitialCooldown, cfg.MaxCooldown = 0, 0 // the script's: the breaker is not under test
	n := ln.Start(t, cfg)
	exec0, exec1 := n.ExecutorAddr(0), n.ExecutorAddr(1)

	t.Run("every documented metric is served once per node", func(t *testing.T) {
		checkDocumentedMetricsServedOnce(t, n, cfg.Validators)
	})

	t.Run("register an executor by transaction", func(t *testing.T) {
		if _, err := n.CLI("keys", "add", "newexec", "--keyring-backend", "test", "--keyring-dir", n.KeysDir); err != nil {
			t.Fatal(err)
		}
		newExec := n.KeyAddress("newexec")
		if code, log := n.Tx(ln.AgentKey(0), "bank", "send", ln.AgentKey(0), newExec, "2000000stake"); code != 0 {
			t.Fatalf("fund newexec: code %d: %s", code, log)
		}
		// lottery capture by self-declared weight: weight 101 needs more
		// than the minimum bond (participant_bond_per_weight 10000stake).
		code, log := n.Tx("newexec", "inference", "register-participant", "http://127.0.0.1:9", ln.Model,
			"--weight", "101", "--bond", "1000000stake")
		if code == 0 || !strings.Contains(log, "needs a bond of 1010000stake") {
			t.Fatalf("register above the bond: code %d log %q, want a refusal", code, log)
		}
		if code, log := n.Tx("newexec", "inference", "register-participant", "http://127.0.0.1:9", ln.Model,
			"--weight", "5", "--bond", "1000000stake"); code != 0 {
			t.Fatalf("register: code %d: %s", code, log)
		}
		p := n.Participant(newExec)
		if p.Status != ln.Active || p.Weight != "5" {
			t.Fatalf("registered participant = %+v", p)
		}
		var group struct {
			Group struct {
				Members []struct{ Address string } `json:"members"`
			} `json:"group"`
		}
		if err := n.Query(&group, "inference", "epoch-group"); err != nil {
			t.Fatal(err)
		}
		if len(group.Group.Members) != 2 {
			t.Fatalf("epoch group has %d members, want the 2 genesis executors (newcomers join next epoch)", len(group.Group.Members))
		}
		code, log = n.Tx(ln.AgentKey(0), "inference", "start-inference", "smoke-not-member", ln.Model, newExec)
		if code == 0 || !strings.Contains(log, "not in the current epoch group") {
			t.Fatalf("start on a non-member: code %d log %q, want a refusal", code, log)
		}
		if p.Bond.Amount != "1000000" || p.Bond.Denom != "stake" {
			t.Fatalf("registered bond = %+v, want 1000000stake", p.Bond)
		}
		// Leaving keeps the record (and bond) until the next boundary.
		if code, log := n.Tx("newexec", "inference", "deregister-participant"); code != 0 {
			t.Fatalf("deregister: code %d: %s", code, log)
		}
		if p := n.Participant(newExec); p.LeavingEpoch == "" || p.LeavingEpoch == "0" {
			t.Fatalf("deregistered participant = %+v, want a leaving_epoch", p)
		}
		code, log = n.Tx("newexec", "inference", "deregister-participant")
		if code == 0 || !strings.Contains(log, "asked to leave in epoch") {
			t.Fatalf("deregister twice: code %d log %q, want a refusal", code, log)
		}
	})

	t.Run("random executor is reproducible", func(t *testing.T) {
		var a, b struct {
			Executor struct{ Address string } `json:"executor"`
		}
		if err := n.Query(&a, "inference", "random-executor", ln.Model, "7"); err != nil {
			t.Fatal(err)
		}
		if err := n.Query(&b, "inference", "random-executor", ln.Model, "7"); err != nil {
			t.Fatal(err)
		}
		if a.Executor.Address != b.Executor.Address || (a.Executor.Address != exec0 && a.Executor.Address != exec1) {
			t.Fatalf("seed 7 drew %q then %q", a.Executor.Address, b.Executor.Address)
		}
	})

	t.Run("one inference finishes and one expires", func(t *testing.T) {
		agent0 := n.AgentAddr(0)
		for _, c := range [][]string{
			{"smoke-ok", exec0},
			{"smoke-miss", exec1},
		} {
			if code, log := n.Tx(ln.AgentKey(0), "inference", "start-inference", c[0], ln.Model, c[1]); code != 0 {
				t.Fatalf("start %s: code %d: %s", c[0], code, log)
			}
		}
		if code, log := n.Tx("exec0", "inference", "finish-inference", agent0, "smoke-ok"); code != 0 {
			t.Fatalf("finish smoke-ok: code %d: %s", code, log)
		}
		if code, log := n.Tx("exec0", "inference", "finish-inference", agent0, "smoke-miss"); code == 0 || !strings.Contains(log, "not the inference's executor") {
			t.Fatalf("finish by the wrong executor: code %d log %q, want a refusal", code, log)
		}
		miss := n.Inference(agent0, "smoke-miss")
		// Expired at its expiration height; the next block's breaker step
		// weighs the miss.
		n.WaitHeight(ln.Atoi(t, miss.ExpirationHeight)+2, time.Minute)

		if got := n.Inference(agent0, "smoke-ok").Status; got != ln.Finished {
			t.Errorf("smoke-ok is %s", got)
		}
		if got := n.Inference(agent0, "smoke-miss").Status; got != ln.Expired {
			t.Errorf("smoke-miss is %s", got)
		}
		if code, log := n.Tx("exec1", "inference", "finish-inference", agent0, "smoke-miss"); code == 0 || !strings.Contains(log, "EXPIRED") {
			t.Errorf("finish after expiry: code %d log %q, want a refusal", code, log)
		}
		if p := n.Participant(exec0); ln.Atoi(t, p.Stats.InferenceCount) != 1 || ln.Atoi(t, p.Stats.MissedRequests) != 0 {
			t.Errorf("exec0 stats = %+v, want 1 finished 0 missed", p.Stats)
		}
		// One agent's miss of an executor the validators attest up is held,
		// not counted, and charged to that agent.
		if p := n.Participant(exec1); ln.Atoi(t, p.Stats.InferenceCount) != 0 || ln.Atoi(t, p.Stats.MissedRequests) != 0 {
			t.Errorf("exec1 stats = %+v, want 0 finished 0 missed (the miss is held)", p.Stats)
		}
		if h, err := n.Health(exec1); err != nil || h.HeldMisses != 1 {
			t.Errorf("exec1 health %+v (%v), want 1 held miss", h, err)
		}
		if a, err := n.TransferAgent(n.AgentAddr(0)); err != nil || a.Agent.Standing.ChargedMisses != 1 {
			t.Errorf("agent0 standing %+v (%v), want 1 charged miss", a, err)
		}
	})

	t.Run("load driver against a dark executor", func(t *testing.T) {
		n.Refuse(1)
		load := n.RunLoad(3, 4, "smoke", 3*time.Minute)
		t.Logf("loadgen:\n%s", load.Output())
		seen := map[string]int{}
		for _, ev := range load.Events() {
			want := map[string]string{exec0: "answered", exec1: "no_answer"}[ev.Executor]
			if ev.Outcome != want {
				t.Errorf("%s on %s: outcome %s, want %s", ev.ID, ev.Executor, ev.Outcome, want)
			}
			wantStatus := map[string]string{"answered": ln.Finished, "no_answer": ln.Expired}[ev.Outcome]
			if got := n.Inference(n.KeyAddress(ev.Agent), ev.ID).Status; got != wantStatus {
				t.Errorf("%s (%s) is %s on chain, want %s", ev.ID, ev.Outcome, got, wantStatus)
			}
			seen[ev.Outcome]++
		}
		if seen["answered"]+seen["no_answer"] != 12 {
			t.Errorf("events: %v, want 12 routed requests", seen)
		}
	})
}
