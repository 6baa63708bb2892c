package judge

// Standing is what an effect does to the standing of its miss's transfer
// agent, the one rule the keeper and the outage simulator apply:
//   - charge +1: the agent is charged a miss no attestation backs: a held
//     miss, or one only other agents' misses corroborated (so colluding
//     agents pay for every miss they make count);
//   - charge -1: a charged miss is refunded: an attestation backed it, or
//     covered it without counting it (the attestation already counted one of
//     the agent's);
//   - corroborated: the miss goes on the agent's record as the executor's
//     fault.
//
// ok is false for an effect about no miss (a state change, a cap refusal).
func Standing(e Effect) (agent string, charge int, corroborated, ok bool) {
	switch e.Kind {
	case Counted:
		v := e.Verdict
		switch {
		case v.ByAttestation && v.WasHeld:
			charge = -1
		case !v.ByAttestation && !v.WasHeld:
			charge = +1
		}
		return v.Miss.Agent, charge, true, true
	case Excused:
		if e.Verdict.WasHeld {
			return e.Verdict.Miss.Agent, -1, true, true
		}
		return e.Verdict.Miss.Agent, 0, false, true
	case Held:
		return e.Outcome.Agent, +1, false, true
	}
	return "", 0, false, false
}
