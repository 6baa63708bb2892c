package evidence

// corroborate counts the held misses that the miss just observed (at index
// newest) backs or is backed by, and reports them oldest first.
//
// Misses count in groups of MinAgents held misses from distinct agents
// whose lifetimes overlap pairwise, all in the window: the new miss and,
// for each other agent, its oldest held miss that overlaps every one chosen
// so far. Probe misses group only with probe misses of the same PROBE
// period (started at or after since), overlapping or not: only one probe is
// in flight at a time. A miss backs exactly one group. So no agent's word weighs more
// than another agent's, and a single account alone never makes a miss
// count. Overlap matters: the executor must have failed two agents at the
// same time. Without it a griefer could wait for honest misses (which it
// sees on chain once they expire) and pair a burst of its own with them;
// with it, a griefer has to keep starts in flight all the time, each
// charged to it, to be in a position to pair with an honest miss.
func (l Ledger) corroborate(p Params, newest int, since int64) []Verdict {
	need := int(max(p.MinAgents, 1))
	group := []int{newest}
	probe := l.Misses[newest].Probe
	if probe && l.Misses[newest].Start < since {
		return nil // a probe of an earlier PROBE period backs nothing now
	}
	for i := range l.Misses {
		if len(group) == need {
			break
		}
		m := l.Misses[i]
		if m.Counted || i == newest || m.Probe != probe || l.hasAgent(group, m.Agent) {
			continue
		}
		if probe && m.Start < since || !probe && !l.overlapsAll(group, m) {
			continue
		}
		group = append(group, i)
	}
	if len(group) < need {
		return nil
	}
	var out []Verdict
	for i := range l.Misses { // ledger order: oldest first
		if !contains(group, i) {
			continue
		}
		l.Misses[i].Counted = true
		out = append(out, Verdict{Miss: l.Misses[i], WasHeld: i != newest})
	}
	return out
}

// overlaps reports whether two inferences were in flight at a common height.
func overlaps(a, b Miss) bool { return a.Start <= b.End && b.Start <= a.End }

func (l Ledger) overlapsAll(group []int, m Miss) bool {
	for _, j := range group {
		if !overlaps(l.Misses[j], m) {
			return false
		}
	}
	return true
}

func (l Ledger) hasAgent(group []int, agent string) bool {
	for _, j := range group {
		if l.Misses[j].Agent == agent {
			return true
		}
	}
	return false
}

func contains(group []int, i int) bool {
	for _, j := range group {
		if j == i {
			return true
		}
	}
	return false
}
