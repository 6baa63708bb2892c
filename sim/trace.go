package sim

import (
	"fmt"
	"slices"

	"github.com/inferenced/inferenced/x/inference/aggregate"
	"github.com/inferenced/inferenced/x/inference/breaker"
	"github.com/inferenced/inferenced/x/inference/evidence"
	"github.com/inferenced/inferenced/x/inference/judge"
)

// recorder is the chain strategy with a tape: it passes every call on and
// keeps what a replay through the real keeper needs (keeper_test.go): each
// block's attested samples, its finishes, starts and expiries in the order
// the world made them, and the chain's state once the block has ended.
// It only reads the chain's state, so a recorded run decides exactly what
// an unrecorded one does.
type recorder struct {
	*chain
	blocks []blockTrace
}

// blockTrace is one block as the chain strategy saw it.
type blockTrace struct {
	Height   int64
	Attested []aggregate.Sample
	Service  []byte
	Events   []traceEvent
	// End is the state after the block's EndBlock (its expiries).
	End snapshot
}

type traceKind uint8

const (
	traceFinish traceKind = iota
	traceStart
	traceExpire
)

// traceEvent is one start, finish or expiry.
type traceEvent struct {
	Kind  traceKind
	ID    uint64
	Agent int
	// Named is the executor a start's agent named (-1: routed by
	// selection with Seed); Exec is where the inference went (-1: a
	// routed start that drew no one).
	Named, Exec int
	Seed        uint64
	Accepted    bool
	// Probe: the start took the executor's probe slot.
	Probe bool
	// Before is the start's executor and agent as they stood just before
	// it (what its refusal, if any, was about).
	Before startContext
}

// startContext is what a start met: its agent's standing and, when it had
// an executor, that executor's breaker record and SPRT status.
type startContext struct {
	AgentStopped bool
	Record       breaker.Record
	Inactive     bool
	// ProbeHeld: the agent's earlier probe of this PROBE period expired
	// held (ProbeHeldFrom), so it may not take the probe slot.
	ProbeHeld bool
}

// snapshot is the chain's state between blocks.
type snapshot struct {
	Execs  []execState
	Agents []agentStanding
}

// execState is one executor as the keeper stores it: its breaker record
// and evidence ledger (zero when it has none), probe, outcomes queued for
// the next step and epoch stats.
type execState struct {
	Stored           bool
	Record           breaker.Record
	Ledger           evidence.Ledger
	Scope            judge.Scope
	Held             uint32
	ProbeID          uint64
	ProbeAgent       string
	Pending          int
	Finished, Missed uint64
	Inactive         bool
}

// newRecorder records the chain strategy of that name: chain-traffic,
// chain or chain+canary.
func newRecorder(c Config, name string) (*recorder, error) {
	s, err := newStrategy(name, c)
	if err != nil {
		return nil, err
	}
	ch, ok := s.(*chain)
	if !ok || ch.name != name {
		return nil, fmt.Errorf("%s is not a chain strategy the keeper can replay", name)
	}
	return &recorder{chain: ch}, nil
}

// NewEpoch closes the previous epoch's last block before the chain
// forgets it.
func (r *recorder) NewEpoch(start int64) {
	r.close()
	r.chain.NewEpoch(start)
}

// BeginBlock closes the previous block's trace and opens h's.
func (r *recorder) BeginBlock(h int64, votes Votes) {
	r.close()
	r.blocks = append(r.blocks, blockTrace{Height: h, Attested: append([]aggregate.Sample(nil), votes.Attested...),
		Service: append([]byte(nil), votes.Service...)})
	r.chain.BeginBlock(h, votes)
}

// close stores the state at the end of the block being traced, once; the
// run's last block needs it called once the run is over.
func (r *recorder) close() {
	if len(r.blocks) == 0 || r.blocks[len(r.blocks)-1].End.Execs != nil {
		return
	}
	b := &r.blocks[len(r.blocks)-1]
	b.End = snapshot{Agents: append([]agentStanding(nil), r.standing...)}
	for i := range r.execs {
		x := &r.execs[i]
		b.End.Execs = append(b.End.Execs, execState{
			Stored: x.stored, Record: x.x.Record, Ledger: cloneLedger(x.x.Ledger), Held: x.x.Ledger.Held(),
			Scope:   judge.Scope{Agents: slices.Clone(x.x.Scope.Agents), Until: x.x.Scope.Until},
			ProbeID: x.probeID, ProbeAgent: x.probeAgent, Pending: len(x.pending), Finished: x.finished, Missed: x.missed, Inactive: x.inactive,
		})
	}
}

// cloneLedger copies a ledger, so later blocks cannot change a snapshot.
func cloneLedger(l evidence.Ledger) evidence.Ledger {
	l.Misses = append([]evidence.Miss(nil), l.Misses...)
	l.AttestedCredited = append([]string(nil), l.AttestedCredited...)
	return l
}

func (r *recorder) add(ev traceEvent) {
	b := &r.blocks[len(r.blocks)-1]
	b.Events = append(b.Events, ev)
}

func (r *recorder) Start(h int64, inf *Inference, seed uint64) bool {
	ev := traceEvent{Kind: traceStart, ID: inf.ID, Agent: inf.Agent, Named: inf.Exec, Seed: seed}
	ev.Before.AgentStopped = r.standing[inf.Agent].stopped
	if inf.Exec < 0 && !ev.Before.AgentStopped {
		// The draw reads the pool only; drawing it here as well changes
		// nothing the chain's own Start will see.
		if e, ok := r.draw(seed); ok {
			r.before(&ev, e)
		}
	} else if inf.Exec >= 0 {
		r.before(&ev, inf.Exec)
	}
	ev.Accepted = r.chain.Start(h, inf, seed)
	ev.Exec, ev.Probe = inf.Exec, inf.Probe
	r.add(ev)
	return ev.Accepted
}

func (r *recorder) before(ev *traceEvent, e int) {
	x := &r.execs[e]
	ev.Before.Record, ev.Before.Inactive = x.x.Record, x.inactive
	ev.Before.ProbeHeld = x.x.Ledger.ProbeHeldFrom(r.agents[ev.Agent], x.x.Record.Since)
}

func (r *recorder) Finish(h int64, inf *Inference) {
	r.add(traceEvent{Kind: traceFinish, ID: inf.ID, Agent: inf.Agent, Named: -1, Exec: inf.Exec})
	r.chain.Finish(h, inf)
}

func (r *recorder) Expire(h int64, inf *Inference) {
	r.add(traceEvent{Kind: traceExpire, ID: inf.ID, Agent: inf.Agent, Named: -1, Exec: inf.Exec, Probe: inf.Probe})
	r.chain.Expire(h, inf)
}

// recordRun runs sc through the recorded chain strategy, with the
// validators' attestation or on traffic alone, and returns the tape.
func recordRun(c Config, sc Scenario, strategy string) ([]blockTrace, *metrics, error) {
	if err := c.Validate(); err != nil {
		return nil, nil, err
	}
	r, err := newRecorder(c, strategy)
	if err != nil {
		return nil, nil, err
	}
	m, err := newWorld(c, sc, r).run()
	if err != nil {
		return nil, nil, err
	}
	r.close()
	return r.blocks, m, nil
}
