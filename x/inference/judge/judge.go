// Package judge decides what one traffic outcome, or one attested verdict,
// does to an executor: the outcome passes through the evidence ledger, the
// verdicts the ledger gives pass through the breaker, and the effects the
// store must record come back in the order they happened. Pure values and
// integer arithmetic: x/inference/breakerstore applies the effects to the store,
// and the outage simulator (sim/) runs this very code, so the two cannot
// drift apart.
package judge

import (
	"slices"

	"github.com/inferenced/inferenced/x/inference/breaker"
	"github.com/inferenced/inferenced/x/inference/evidence"
)

// Executor is one executor's breaker record, evidence ledger and scope.
type Executor struct {
	Record breaker.Record
	Ledger evidence.Ledger
	Scope  Scope
}

// Scope is who an executor that the canaries see serving is out for after
// a scoped traffic trip (breaker.ReasonScoped): the agents whose misses
// counted in the traffic window, until the height Until (exclusive).
type Scope struct {
	Agents []string
	Until  int64
}

// Refuses reports whether the scope keeps agent out at height.
func (s Scope) Refuses(agent string, height int64) bool {
	if height >= s.Until {
		return false
	}
	for _, a := range s.Agents {
		if a == agent {
			return true
		}
	}
	return false
}

// MaxScopedAgents bounds a scope: the traffic window holds at most
// breaker.MaxWindow misses, so no more agents can have counted.
const MaxScopedAgents = breaker.MaxWindow

// Fresh is the executor a new record starts from: no recent miss of any
// kind, so its traffic history is the successes it had this epoch
// (priorOks, up to a full window) and its attested and service histories
// a full window of oks (those samples come every block, and a miss would
// have given it a record already).
func Fresh(priorOks uint32) Executor {
	var x Executor
	x.Record.Windows[breaker.Traffic] = breaker.Prefilled(uint64(priorOks))
	x.Record.Windows[breaker.Attested] = breaker.Prefilled(breaker.MaxWindow)
	x.Record.Windows[breaker.Service] = breaker.Prefilled(breaker.MaxWindow)
	return x
}

// Params are the breaker's and the evidence rule's settings.
type Params struct {
	Breaker  breaker.Params
	Evidence evidence.Params
}

// Outcome is the end of one inference on the executor: finished (ok) or
// expired (miss), started by Agent at Start and ended at End. Probe marks
// the executor's probe inference.
type Outcome struct {
	Agent      string
	Start, End int64
	Miss       bool
	Probe      bool
}

// EffectKind says what an Effect asks the store to record.
type EffectKind uint8

const (
	// Counted: Verdict's miss counts against the executor (the SPRT and
	// the agent's standing hear of it).
	Counted EffectKind = iota
	// Excused: Verdict's miss is covered by an attestation that already
	// counted one of its agent's; the agent is not charged for it.
	Excused
	// Held: the new miss is held, nothing backs it yet; its agent is
	// charged.
	Held
	// Moved: the breaker changed state (Transition).
	Moved
	// CapRefused: the executor tripped but the exclusion cap kept it
	// HEALTHY (Transition says on what).
	CapRefused
	// Scoped: a traffic trip of an executor the canaries see serving kept
	// it HEALTHY and out only for the agents whose misses counted (the
	// executor's Scope; Transition says for how long).
	Scoped
)

// Effect is one thing the store must record, in order.
type Effect struct {
	Kind       EffectKind
	Verdict    evidence.Verdict   // Counted, Excused
	Outcome    Outcome            // Held
	Transition breaker.Transition // Moved, CapRefused, Scoped
	// Serving (Counted): the canaries saw the executor serving when the
	// miss counted, so the SPRT does not hear of it: no set of agents can
	// make an executor the validators see serving INACTIVE.
	Serving bool
}

// MayExclude is asked only when a HEALTHY executor trips (the exclusion
// cap); false keeps it HEALTHY and counts the refusal.
type MayExclude func() bool

// Traffic applies one traffic outcome. A success reaches the breaker at
// once; a miss only when it is corroborated, together with the held misses
// it corroborates. A miss nothing backs is held; if it was the probe, the
// slot is released for another agent's probe instead of re-excluding.
func Traffic(x Executor, o Outcome, p Params, height int64, mayExclude MayExclude) (Executor, []Effect) {
	var effects []Effect
	if !o.Miss {
		x.Ledger = x.Ledger.OK(p.Evidence)
		x, effects = observe(x, effects, breaker.Sample{Kind: breaker.Traffic, StartedAt: o.Start, Probe: o.Probe}, p, height, mayExclude)
		return x, effects
	}
	var verdicts []evidence.Verdict
	x.Ledger, verdicts = x.Ledger.Miss(evidence.Miss{
		Agent: o.Agent, Start: o.Start, End: o.End, Probe: o.Probe,
	}, p.Evidence, x.Record.Since)
	decided, observed := false, false // a verdict on the new miss; one the breaker sees
	for _, v := range verdicts {
		if !v.WasHeld {
			decided, observed = true, !v.Excused
		}
		x, effects = count(x, effects, v, p, height, mayExclude)
	}
	if o.Probe && !observed {
		// The probe ended without a result the breaker sees: free the slot.
		x.Record = breaker.ReleaseProbe(x.Record)
	}
	if !decided {
		effects = append(effects, Effect{Kind: Held, Outcome: o})
	}
	return x, effects
}

// Attested applies the validators' majority verdict of one block. An
// attested miss first makes the held traffic misses in flight at the time
// count.
func Attested(x Executor, miss bool, p Params, height int64, mayExclude MayExclude) (Executor, []Effect) {
	return validators(x, breaker.Attested, miss, p, height, mayExclude)
}

// Service applies the validators' service sample of one block: a miss when
// the rate their canaries attest stands out from the peers'. Like an
// attested miss, a service miss first makes the held traffic misses in
// flight at the time count, so an executor failing the canaries cannot get
// the agents whose requests it dropped charged for them.
func Service(x Executor, miss bool, p Params, height int64, mayExclude MayExclude) (Executor, []Effect) {
	return validators(x, breaker.Service, miss, p, height, mayExclude)
}

// validators applies one sample of a kind the validators attest.
func validators(x Executor, kind breaker.Kind, miss bool, p Params, height int64, mayExclude MayExclude) (Executor, []Effect) {
	var effects []Effect
	if miss {
		var verdicts []evidence.Verdict
		x.Ledger, verdicts = x.Ledger.AttestedMiss(height)
		for _, v := range verdicts {
			x, effects = count(x, effects, v, p, height, mayExclude)
		}
	}
	return observe(x, effects, breaker.Sample{Kind: kind, Miss: miss}, p, height, mayExclude)
}

// count applies a verdict: an excused miss only clears its agent; a
// counted one is observed by the breaker, under its own rules (a stale
// miss, or one while EXCLUDED, changes no state).
func count(x Executor, effects []Effect, v evidence.Verdict, p Params, height int64, mayExclude MayExclude) (Executor, []Effect) {
	if v.Excused {
		return x, append(effects, Effect{Kind: Excused, Verdict: v})
	}
	effects = append(effects, Effect{Kind: Counted, Verdict: v, Serving: x.Record.Serving(height)})
	return observe(x, effects, breaker.Sample{Kind: breaker.Traffic, Miss: true, StartedAt: v.Miss.Start, Probe: v.Miss.Probe}, p, height, mayExclude)
}

func observe(x Executor, effects []Effect, s breaker.Sample, p Params, height int64, mayExclude MayExclude) (Executor, []Effect) {
	var t breaker.Transition
	x.Record, t = breaker.Observe(x.Record, s, p.Breaker, height, mayExclude)
	switch {
	case t.Changed():
		effects = append(effects, Effect{Kind: Moved, Transition: t})
	case t.Reason == breaker.ReasonCapRefused:
		effects = append(effects, Effect{Kind: CapRefused, Transition: t})
	case t.Reason == breaker.ReasonScoped:
		x.Scope = Scope{Agents: countedAgents(x.Ledger), Until: height + int64(t.Cooldown)}
		effects = append(effects, Effect{Kind: Scoped, Transition: t})
	}
	return x, effects
}

// countedAgents are the distinct agents of the counted misses in the
// ledger, in the order of their first such miss.
func countedAgents(l evidence.Ledger) []string {
	var out []string
	for _, m := range l.Misses {
		if m.Counted && !slices.Contains(out, m.Agent) && len(out) < MaxScopedAgents {
			out = append(out, m.Agent)
		}
	}
	return out
}

// Claim is what a start on an executor does to its probe slot.
type Claim uint8

const (
	// NoProbe: the executor is not a PROBE with a free slot.
	NoProbe Claim = iota
	// Claimed: the start is the probe; its outcome alone decides it.
	Claimed
	// Refused: the agent's earlier probe of this PROBE period expired
	// uncorroborated; another agent must probe (in shadow mode the start is
	// simply no probe).
	Refused
)

// ClaimProbe is the probe rule for a start by agent on x: the record with
// the slot taken when Claimed, x's record otherwise. Refusing an agent
// whose probe was held stops one account from taking every probe and
// letting it expire, keeping a recovered executor out for the epoch.
func ClaimProbe(x Executor, agent string) (breaker.Record, Claim) {
	rec, claimed := breaker.ClaimProbe(x.Record)
	switch {
	case !claimed:
		return x.Record, NoProbe
	case x.Ledger.ProbeHeldFrom(agent, x.Record.Since):
		return x.Record, Refused
	}
	return rec, Claimed
}
