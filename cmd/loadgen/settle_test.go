package main

import (
	"bytes"
	"strings"
	"testing"
)

// A start the chain took and later pruned is an inference that happened,
// not a refusal: the summary used to count it as "refused: start committed
// but no inference on chain" and take it off the agent's starts.
func TestClassifyMissing(t *testing.T) {
	for _, tc := range []struct {
		name       string
		res        txResult
		committed  bool
		wantPruned bool
		wantReason string
	}{
		{"start never committed", txResult{}, false, false, "start never committed"},
		{"refused in its block (an agent stopped mid-run)", txResult{height: 7, refused: newRefusal(5,
			"failed to execute message; message index: 0: transfer agent is stopped for the rest of the epoch")},
			true, false, "transfer agent is stopped for the rest of the epoch"},
		{"started, then pruned before settling", txResult{height: 7}, true, true, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pruned, reason := classifyMissing(tc.res, tc.committed)
			if pruned != tc.wantPruned || reason != tc.wantReason {
				t.Fatalf("classifyMissing = (%v, %q), want (%v, %q)", pruned, reason, tc.wantPruned, tc.wantReason)
			}
		})
	}
}

// The summary shows pruned inferences in their own column, beside the
// refusals, and keeps them among the agent's starts.
func TestSummaryCountsPrunedApartFromRefused(t *testing.T) {
	s := newStats(nil)
	s.update("exec", func(es *executorStats) { es.Assigned, es.ChainPruned, es.ChainMissing = 3, 2, 1 })
	s.agent("agent0", func(as *agentStats) { as.Starts, as.Pruned = 2, 2 })
	s.refused("agent0", "start never committed")
	var execs, agents bytes.Buffer
	s.print(&execs, map[string]string{"exec": "exec0"})
	s.printAgents(&agents)
	if !strings.Contains(execs.String(), "chain-pruned") {
		t.Fatalf("executor table without chain-pruned:\n%s", execs.String())
	}
	row := strings.Fields(strings.Split(execs.String(), "\n")[1])
	if got := strings.Join(row[len(row)-2:], " "); got != "2 1" {
		t.Errorf("exec row ends %q, want chain-pruned 2 and chain-refused 1:\n%s", got, execs.String())
	}
	lines := strings.Split(agents.String(), "\n")
	if !strings.HasSuffix(strings.TrimSpace(lines[0]), "chain-pruned") {
		t.Fatalf("agent table without chain-pruned:\n%s", agents.String())
	}
	// agent0: 2 starts, 1 refused, 0 finished, 0 expired, 0 open, 2 pruned.
	if got := strings.Join(strings.Fields(lines[1]), " "); got != "agent0 2 1 0 0 0 2" {
		t.Errorf("agent row %q, want \"agent0 2 1 0 0 0 2\":\n%s", got, agents.String())
	}
}
