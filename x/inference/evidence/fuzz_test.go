package evidence

import "testing"

// FuzzLedger drives a ledger with random outcomes from a griefer "g" and
// two honest agents and random attested misses, and checks its invariants
// after every step:
//   - it remembers at most a window of misses;
//   - every miss counts at most once;
//   - attack: the griefer's misses that count without an attestation never
//     outnumber the other agents' misses, and with no other agent none
//     counts (one account alone can never make a miss count);
//   - a verdict's group holds distinct agents whose lifetimes overlap.
func FuzzLedger(f *testing.F) {
	f.Add([]byte{0, 0, 0, 0, 1, 0, 4, 0, 0})
	f.Add([]byte{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0})
	f.Add([]byte{1, 2, 1, 2, 3, 3, 3, 4, 5, 0, 1})
	f.Fuzz(func(t *testing.T, script []byte) {
		p := Params{Window: 1 + uint32(len(script)%16), MinAgents: 2}
		agents := []string{"g", "h1", "h2"}
		var l Ledger
		height := int64(1)
		counted := map[int64]bool{} // by start height, unique per miss here
		var griefCounted, othersMissed int
		onlyGriefer := true
		for _, b := range script {
			height++
			var v []Verdict
			switch op := b % 6; {
			case op <= 2:
				a := agents[op]
				if op != 0 {
					othersMissed++
					onlyGriefer = false
				}
				l, v = l.Miss(Miss{Agent: a, Start: height, End: height + int64(b/6)%12}, p, 0)
			case op == 3:
				l = l.OK(p)
			case op == 4:
				l, v = l.AttestedMiss(height - int64(b/6)%20)
			default:
				height += int64(b / 6)
			}
			for _, x := range v {
				if counted[x.Miss.Start] {
					t.Fatalf("miss %+v counted twice", x.Miss)
				}
				counted[x.Miss.Start] = true
				if x.Miss.Agent == "g" && !x.ByAttestation {
					griefCounted++
				}
			}
			if !groupsDistinct(v) {
				t.Fatalf("a group repeats an agent: %+v", v)
			}
			if len(l.Misses) > int(p.Window) {
				t.Fatalf("%d misses in a window of %d", len(l.Misses), p.Window)
			}
			if griefCounted > othersMissed || (onlyGriefer && griefCounted > 0) {
				t.Fatalf("griefer counted %d without attestation against %d other misses", griefCounted, othersMissed)
			}
		}
	})
}

// groupsDistinct reports whether the agent-backed verdicts of one step, in
// groups of two, name two distinct agents each, in flight at a common
// height.
func groupsDistinct(v []Verdict) bool {
	var agentBacked []Verdict
	for _, x := range v {
		if !x.ByAttestation {
			agentBacked = append(agentBacked, x)
		}
	}
	for i := 0; i+1 < len(agentBacked); i += 2 {
		a, b := agentBacked[i].Miss, agentBacked[i+1].Miss
		if a.Agent == b.Agent || !overlaps(a, b) {
			return false
		}
	}
	return len(agentBacked)%2 == 0
}
