package breakerstore

import (
	"fmt"
	"slices"

	"cosmossdk.io/core/address"

	sdk "github.com/cosmos/cosmos-sdk/types"

	"github.com/inferenced/inferenced/x/inference/breaker"
	"github.com/inferenced/inferenced/x/inference/evidence"
	"github.com/inferenced/inferenced/x/inference/judge"
	"github.com/inferenced/inferenced/x/inference/types"
)

// entry is an executor's breaker record as the store handles it: the pure
// record, its evidence ledger, and what only the store knows (the probe's
// inference, named by its transfer agent and id).
type entry struct {
	addr   sdk.AccAddress
	stored bool // a record exists in the store
	rec    breaker.Record
	ledger evidence.Ledger
	probe  probeRef
	scope  judge.Scope
}

// probeRef names a probe inference: ids are unique per transfer agent, so
// the id alone would let another agent's inference of the same id on the
// same executor pass for the probe.
type probeRef struct {
	agent, id string
}

// is reports whether the outcome of agent's inference id is this probe's.
func (p probeRef) is(agent, id string) bool { return p.id != "" && p.agent == agent && p.id == id }

// fresh is the entry of an executor without a record as a new record
// starts it (judge.Fresh).
func (e entry) fresh(priorOks uint32) entry {
	x := judge.Fresh(priorOks)
	e.rec, e.ledger, e.scope = x.Record, x.Ledger, x.Scope
	return e
}

// plain reports whether the entry carries nothing a fresh healthy executor
// would not: it then needs no record.
func (e entry) plain() bool { return e.rec.Plain() && e.ledger.Empty() }

// same reports whether two entries would store the same record.
func (e entry) same(o entry) bool {
	return e.rec == o.rec && e.probe == o.probe && e.ledger.Equal(o.ledger) &&
		e.scope.Until == o.scope.Until && slices.Equal(e.scope.Agents, o.scope.Agents)
}

// entryOf is a stored record as the store handles it.
func entryOf(addr sdk.AccAddress, h types.ExecutorHealth) entry {
	return entry{addr: addr, stored: true, rec: toBreaker(h), ledger: toLedger(h), probe: probeRef{agent: h.ProbeAgent, id: h.ProbeInferenceId},
		scope: judge.Scope{Agents: h.ScopedAgents, Until: h.ScopedUntil}}
}

func toLedger(h types.ExecutorHealth) evidence.Ledger {
	l := evidence.Ledger{Outcomes: h.TrafficOutcomes, AttestedMissAt: h.AttestedMissAt, AttestedCredited: h.AttestedCredited}
	for _, m := range h.RecentMisses {
		l.Misses = append(l.Misses, evidence.Miss{
			Agent: m.Agent, Outcome: m.Outcome, Start: m.StartHeight, End: m.EndHeight, Counted: m.Counted, Probe: m.Probe,
		})
	}
	return l
}

func fromLedger(l evidence.Ledger) []types.TrafficMiss {
	var out []types.TrafficMiss
	for _, m := range l.Misses {
		out = append(out, types.TrafficMiss{
			Agent: m.Agent, Outcome: m.Outcome, StartHeight: m.Start, EndHeight: m.End, Counted: m.Counted, Probe: m.Probe,
		})
	}
	return out
}

func toBreaker(h types.ExecutorHealth) breaker.Record {
	var r breaker.Record
	r.State = breaker.State(h.State)
	r.Windows[breaker.Traffic] = breaker.Window{Bits: h.Traffic.Bits, Count: h.Traffic.Count}
	r.Windows[breaker.Attested] = breaker.Window{Bits: h.Attested.Bits, Count: h.Attested.Count}
	r.Windows[breaker.Service] = breaker.Window{Bits: h.Service.Bits, Count: h.Service.Count}
	r.Evidence = breaker.Kind(h.Evidence)
	r.Reason = breaker.Reason(h.Reason)
	r.Since = h.SinceHeight
	r.ExcludedAt = h.ExcludedAt
	r.Cooldown = h.CooldownBlocks
	r.Exclusions = h.Exclusions
	r.CapRefusals = h.CapRefusals
	r.ProbeInFlight = h.ProbeInferenceId != ""
	r.ServiceOKAt, r.Overruled, r.Scopes = h.ServiceOkAt, h.Overruled, h.Scopes
	return r
}

func (e entry) proto(ac address.Codec) (types.ExecutorHealth, error) {
	address, err := ac.BytesToString(e.addr)
	if err != nil {
		return types.ExecutorHealth{}, fmt.Errorf("encode executor: %w", err)
	}
	r := e.rec
	t, a, sv := r.Windows[breaker.Traffic], r.Windows[breaker.Attested], r.Windows[breaker.Service]
	return types.ExecutorHealth{
		Address:          address,
		State:            types.HealthState(r.State),
		Traffic:          types.SampleWindow{Bits: t.Bits, Count: t.Count},
		Attested:         types.SampleWindow{Bits: a.Bits, Count: a.Count},
		Service:          types.SampleWindow{Bits: sv.Bits, Count: sv.Count},
		Evidence:         types.SampleKind(r.Evidence),
		Reason:           types.HealthReason(r.Reason),
		SinceHeight:      r.Since,
		ExcludedAt:       r.ExcludedAt,
		CooldownBlocks:   r.Cooldown,
		Exclusions:       r.Exclusions,
		CapRefusals:      r.CapRefusals,
		ProbeInferenceId: e.probe.id,
		ProbeAgent:       e.probe.agent,
		RecentMisses:     fromLedger(e.ledger),
		TrafficOutcomes:  e.ledger.Outcomes,
		AttestedMissAt:   e.ledger.AttestedMissAt,
		AttestedCredited: e.ledger.AttestedCredited,
		ServiceOkAt:      r.ServiceOKAt,
		Overruled:        r.Overruled,
		Scopes:           r.Scopes,
		ScopedAgents:     e.scope.Agents,
		ScopedUntil:      e.scope.Until,
	}, nil
}
