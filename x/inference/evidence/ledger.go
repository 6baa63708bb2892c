// Package evidence decides when a traffic miss is the executor's fault. A
// miss says only that an inference expired: the executor may have failed,
// or its transfer agent may never have forwarded the request. One agent's
// word is therefore never enough. An executor's ledger keeps the misses
// among its last traffic outcomes, each with its agent; a miss counts
// against the executor only when it is corroborated, and is held until
// then. Pure values and integer arithmetic: the store (x/inference/breakerstore)
// keeps the ledger in the executor's breaker record.
package evidence

// AttestationLag is how many blocks after an inference ended an attested
// miss may still fall in its lifetime: the verdicts applied in block h were
// voted in h-1 on probes made before it.
const AttestationLag = 2

// MaxCredited bounds how many agents' misses one attested miss counts (and
// so the ledger's AttestedCredited).
const MaxCredited = 64

// Params are the corroboration rule's settings.
type Params struct {
	// Window is how many of the executor's latest traffic outcomes the
	// ledger remembers (the traffic window of the breaker).
	Window uint32
	// MinAgents is how many distinct agents must back a miss, its own
	// included. 1 trusts a single agent's word.
	MinAgents uint32
}

// Miss is an expired inference in the ledger.
type Miss struct {
	Agent string
	// Outcome numbers the executor's traffic outcome this miss was.
	Outcome    uint64
	Start, End int64
	// Counted misses were corroborated; the others are held.
	Counted bool
	// Probe marks the executor's probe inference.
	Probe bool
}

// Ledger is one executor's recent traffic evidence. The zero Ledger is an
// executor with no recent miss.
type Ledger struct {
	// Outcomes is how many traffic outcomes the ledger has seen.
	Outcomes uint64
	// Misses are the misses among the last Window outcomes, oldest first.
	Misses []Miss
	// AttestedMissAt is the last height with an attested miss (0: none).
	AttestedMissAt int64
	// AttestedCredited are the agents one of whose misses that attested
	// miss already counted: it counts one miss per agent, so that an agent
	// cannot turn a one-block blip into as many misses as it had in flight.
	AttestedCredited []string
}

// Verdict is a miss that counts against the executor now.
type Verdict struct {
	Miss Miss
	// WasHeld: it was held before (its agent was charged for it).
	WasHeld bool
	// ByAttestation: an attested miss fell in its lifetime; otherwise
	// misses through other agents backed it.
	ByAttestation bool
	// Excused: an attested miss fell in its lifetime but already counted a
	// miss of this agent; it does not count against the executor, and its
	// agent is not charged for it.
	Excused bool
}

// Empty reports whether the ledger remembers no miss: it then needs no
// storage.
func (l Ledger) Empty() bool { return len(l.Misses) == 0 }

// Held is how many remembered misses are not corroborated.
func (l Ledger) Held() uint32 {
	var n uint32
	for _, m := range l.Misses {
		if !m.Counted {
			n++
		}
	}
	return n
}

// Equal reports whether two ledgers hold the same evidence.
func (l Ledger) Equal(o Ledger) bool {
	if l.Outcomes != o.Outcomes || l.AttestedMissAt != o.AttestedMissAt || len(l.Misses) != len(o.Misses) ||
		len(l.AttestedCredited) != len(o.AttestedCredited) {
		return false
	}
	for i := range l.AttestedCredited {
		if l.AttestedCredited[i] != o.AttestedCredited[i] {
			return false
		}
	}
	for i := range l.Misses {
		if l.Misses[i] != o.Misses[i] {
			return false
		}
	}
	return true
}

// ProbeHeldFrom reports whether agent's probe of the executor, started at
// or after since, expired and is held: that agent may not take the probe
// slot again, or one account could keep a recovered executor waiting
// forever by taking every probe and letting it expire.
func (l Ledger) ProbeHeldFrom(agent string, since int64) bool {
	for _, m := range l.Misses {
		if m.Probe && !m.Counted && m.Agent == agent && m.Start >= since {
			return true
		}
	}
	return false
}

// OK records a finished inference.
func (l Ledger) OK(p Params) Ledger {
	l = l.clone()
	l.Outcomes++
	return l.age(p)
}

// Miss records an expired inference and returns the misses that count now,
// oldest first: the new one when it is corroborated, and the held ones it
// corroborates. A new miss counts at once when an attested miss fell in its
// lifetime. since is the height of the executor's last state change: a
// probe miss pairs only with another agent's probe of the same PROBE period
// (probes never overlap: one is in flight at a time), never with a miss
// from before it.
func (l Ledger) Miss(m Miss, p Params, since int64) (Ledger, []Verdict) {
	l = l.clone()
	m.Outcome, m.Counted = l.Outcomes, false
	l.Outcomes++
	l = l.age(p)
	if p.MinAgents > 1 && l.AttestedMissAt != 0 && covers(m, l.AttestedMissAt) {
		m.Counted = true // out of the pairing either way
		l.Misses = append(l.Misses, m)
		return l, []Verdict{l.creditAttested(m, false)}
	}
	l.Misses = append(l.Misses, m)
	return l, l.corroborate(p, len(l.Misses)-1, since)
}

// AttestedMiss records an attested miss of the executor at height and
// returns the held misses whose lifetime it falls in, oldest first: one per
// agent counts, the agent's others are excused.
func (l Ledger) AttestedMiss(height int64) (Ledger, []Verdict) {
	l = l.clone()
	if height != l.AttestedMissAt {
		l.AttestedMissAt, l.AttestedCredited = height, nil
	}
	var out []Verdict
	for i := range l.Misses {
		m := &l.Misses[i]
		if !m.Counted && covers(*m, height) {
			m.Counted = true
			out = append(out, l.creditAttested(*m, true))
		}
	}
	return l, out
}

// creditAttested is the verdict on a miss the last attested miss covers:
// counted if that attestation has not counted one of its agent's yet,
// excused otherwise.
func (l *Ledger) creditAttested(m Miss, wasHeld bool) Verdict {
	v := Verdict{Miss: m, WasHeld: wasHeld, ByAttestation: true}
	for _, a := range l.AttestedCredited {
		if a == m.Agent {
			v.Excused = true
			return v
		}
	}
	if len(l.AttestedCredited) >= MaxCredited {
		v.Excused = true // bounded: one attestation never counts more agents
		return v
	}
	l.AttestedCredited = append(l.AttestedCredited, m.Agent)
	return v
}

func covers(m Miss, height int64) bool {
	return height >= m.Start && height <= m.End+AttestationLag
}

// age forgets the misses that are no longer among the last Window outcomes.
// A held miss that ages out stays charged to its agent: nothing backed it.
func (l Ledger) age(p Params) Ledger {
	keep := l.Misses[:0]
	for _, m := range l.Misses {
		if l.Outcomes-m.Outcome <= uint64(p.Window) {
			keep = append(keep, m)
		}
	}
	l.Misses = keep
	return l
}

func (l Ledger) clone() Ledger {
	l.Misses = append([]Miss(nil), l.Misses...)
	l.AttestedCredited = append([]string(nil), l.AttestedCredited...)
	return l
}
