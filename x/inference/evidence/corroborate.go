package evidence

// corroborate counts the held misses that are now backed and reports them,
// oldest first; newest is the index of the miss just observed (not held
// before).
//
// Misses count in groups, one held miss from each of MinAgents distinct
// agents, all in the window: the oldest held miss of each of the
// MinAgents agents whose held misses are oldest. A miss backs exactly one
// group. So no agent's word weighs more than another agent's, a single
// account alone never makes a miss count, and a griefer's misses beside
// honest traffic count at most once per honest miss they pair with.
func (l Ledger) corroborate(p Params, newest int) []Verdict {
	need := int(max(p.MinAgents, 1))
	var out []Verdict
	for {
		group := l.oldestHeldPerAgent()
		if len(group) < need {
			return out
		}
		for _, i := range group[:need] {
			l.Misses[i].Counted = true
			out = append(out, Verdict{Miss: l.Misses[i], WasHeld: i != newest})
		}
	}
}

// oldestHeldPerAgent returns the index of each agent's oldest held miss, in
// ledger order (a ledger holds at most a window of misses, so the quadratic
// scan is small and needs no map).
func (l Ledger) oldestHeldPerAgent() []int {
	var out []int
	for i, m := range l.Misses {
		if m.Counted {
			continue
		}
		seen := false
		for _, j := range out {
			if l.Misses[j].Agent == m.Agent {
				seen = true
				break
			}
		}
		if !seen {
			out = append(out, i)
		}
	}
	return out
}
