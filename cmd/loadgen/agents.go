package main

import (
	"fmt"
	"io"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
)

// agentKey is how scripts/localnet.sh names the load driver's agents:
// agent0, agent1, ... (registered in genesis).
var agentKey = regexp.MustCompile(`^agent([0-9]+)$`)

// griefKey is the registered agent the localnet keeps for attacks.
const griefKey = "griefer"

// pickAgents resolves the agent keys the driver plays, in round-robin order:
// the comma-separated names given, else (honest mode) every agent<k> key of
// the keyring in numeric order, or (grief mode) the griefer.
func pickAgents(names string, grief bool, accounts map[string]*account) ([]*account, error) {
	byName := make(map[string]*account, len(accounts))
	for _, a := range accounts {
		byName[a.name] = a
	}
	if names == "" {
		if grief {
			names = griefKey
		} else {
			names = strings.Join(localnetAgents(byName), ",")
		}
	}
	if names == "" {
		return nil, fmt.Errorf("no agent keys (agent0, agent1, ...) in the keyring: name them with -agents")
	}
	var out []*account
	seen := map[string]bool{}
	for _, n := range strings.Split(names, ",") {
		n = strings.TrimSpace(n)
		a, ok := byName[n]
		if !ok {
			return nil, fmt.Errorf("no key %q in the keyring", n)
		}
		if seen[n] {
			return nil, fmt.Errorf("agent %q named twice", n)
		}
		seen[n] = true
		out = append(out, a)
	}
	return out, nil
}

// localnetAgents lists the agent<k> key names in numeric order.
func localnetAgents(byName map[string]*account) []string {
	type numbered struct {
		name string
		k    int
	}
	var keys []numbered
	for name := range byName {
		if m := agentKey.FindStringSubmatch(name); m != nil {
			k, err := strconv.Atoi(m[1])
			if err == nil {
				keys = append(keys, numbered{name, k})
			}
		}
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i].k < keys[j].k })
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = k.name
	}
	return out
}

// agentStats counts one agent's starts: accepted at CheckTx, refused (at
// CheckTx or in the block) by the chain's reason, and the chain's verdict on
// the accepted ones once they could no longer be open.
type agentStats struct {
	Starts   int
	Refused  map[string]int
	Finished int
	Expired  int
	Open     int
	Pruned   int // started, then pruned before the driver settled
}

func (s *stats) agent(name string, f func(*agentStats)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	as, ok := s.byAgent[name]
	if !ok {
		as = &agentStats{Refused: map[string]int{}}
		s.byAgent[name] = as
	}
	f(as)
}

// refused counts a refused start of agent and reports whether it is the
// first with that reason (worth a line on stderr).
func (s *stats) refused(agent, reason string) (first bool) {
	s.agent(agent, func(as *agentStats) {
		first = as.Refused[reason] == 0
		as.Refused[reason]++
	})
	return first
}

func (s *stats) printAgents(w io.Writer) {
	s.mu.Lock()
	defer s.mu.Unlock()
	names := make([]string, 0, len(s.byAgent))
	for n := range s.byAgent {
		names = append(names, n)
	}
	sort.Strings(names)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "agent\tstarts\trefused\tchain-finished\tchain-expired\tchain-open\tchain-pruned")
	for _, n := range names {
		as := s.byAgent[n]
		refused := 0
		for _, c := range as.Refused {
			refused += c
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%d\n", n, as.Starts, refused, as.Finished, as.Expired, as.Open, as.Pruned)
	}
	_ = tw.Flush()
	for _, n := range names {
		reasons := make([]string, 0, len(s.byAgent[n].Refused))
		for r := range s.byAgent[n].Refused {
			reasons = append(reasons, r)
		}
		sort.Strings(reasons)
		for _, r := range reasons {
			fmt.Fprintf(w, "refused %s x%d: %s\n", n, s.byAgent[n].Refused[r], r)
		}
	}
}
