package sim

import (
	"fmt"
	"slices"

	"github.com/inferenced/inferenced/x/inference/aggregate"
	"github.com/inferenced/inferenced/x/inference/breaker"
	"github.com/inferenced/inferenced/x/inference/judge"
	"github.com/inferenced/inferenced/x/inference/lottery"
	"github.com/inferenced/inferenced/x/inference/service"
	"github.com/inferenced/inferenced/x/inference/sprt"
	"github.com/inferenced/inferenced/x/inference/types"
)

// chain is this project's design, modelled block by block the way
// x/inference/breakerstore and the keeper run it: outcomes are queued and
// applied by the next block's step through x/inference/judge (evidence
// ledger, then breaker), attested samples after them, the exclusion cap,
// the SPRT over counted misses, the transfer agents' standing, the probe
// slot and the selection stage with its probe weight and fallback. Only
// the storage is replaced by memory; keeper_test.go checks the two agree.
type chain struct {
	name     string
	c        Config
	attests  bool
	canaries bool // reads the validators' service rates (chain+canary)
	service  service.View
	p        judge.Params
	params   types.Params
	test     sprt.Test
	weights  []uint64
	total    uint64
	agents   []string
	execs    []chainExec
	standing []agentStanding
	// excludedWeight is the weight of the executors the breaker holds
	// out (EXCLUDED or PROBE), for the cap.
	excludedWeight uint64
	queued         []int // executors with queued outcomes, in queueing order
	// gate, when set, must also agree before a traffic trip excludes (a
	// candidate rule); each, when set, runs at the end of every step.
	gate func(e int) bool
	each func(h int64)
	// pool caches the selection pool until something changes.
	pool       []int
	poolW      []uint64
	poolValid  bool
	fallback   bool // the health stage left no one: the pool is the one before it
	poolHeight int64
	height     int64
	// counted, held: traffic misses that counted against their executor
	// when observed or later, and those held when observed.
	counted, held uint64
}

type chainExec struct {
	x       judge.Executor
	stored  bool
	probeID uint64
	// probeAgent is the probe's agent: the keeper names a probe by (agent, id).
	probeAgent string
	pending    []pendingOutcome
	finished   uint64 // InferenceCount this epoch
	missed     uint64 // MissedRequests this epoch (counted misses)
	inactive   bool
}

type pendingOutcome struct {
	inf      Inference
	priorOks uint32
}

type agentStanding struct {
	finished, charged uint64
	stopped           bool
}

func newChain(name string, c Config, attests bool) (*chain, error) {
	p := c.Params
	p.EpochLength, p.ExpirationBlocks = uint64(c.EpochLength), uint64(c.ExpirationBlocks)
	test, err := sprt.New(p.DowntimeGoodPercentage, p.DowntimeBadPercentage, p.DowntimeHThreshold)
	if err != nil {
		return nil, fmt.Errorf("sprt: %w", err)
	}
	s := &chain{name: name, c: c, attests: attests, params: p, test: test, weights: c.weights(),
		p: judge.Params{Breaker: p.BreakerParams(), Evidence: p.EvidenceParams()}}
	if s.total, err = lottery.Total(s.weights); err != nil {
		return nil, err
	}
	for a := 0; a < c.Agents+c.Griefers; a++ {
		s.agents = append(s.agents, agentName(c, a))
	}
	return s, nil
}

// agentName is agent a's address in the ledger (the honest agents, then
// the griefers).
func agentName(c Config, a int) string {
	switch {
	case a == c.Agents:
		return "griefer"
	case a > c.Agents:
		return fmt.Sprintf("griefer%d", a-c.Agents)
	}
	return fmt.Sprintf("agent%d", a)
}

func (s *chain) Attests() bool { return s.attests }

// ReadsCanaries: the chain+canary strategy applies service samples.
func (s *chain) ReadsCanaries() bool { return s.canaries }

// OutOnService: e is EXCLUDED or PROBE on service evidence.
func (s *chain) OutOnService(e int) bool {
	r := s.execs[e].x.Record
	return r.State != breaker.Healthy && r.Evidence == breaker.Service
}

// Suspect: the chain holds e out (EXCLUDED or PROBE), or, with held, holds
// a traffic miss against it: what a monitor reads from the chain to canary
// it harder.
func (s *chain) Suspect(e int, held bool) bool {
	x := &s.execs[e]
	return x.x.Record.State != breaker.Healthy || (held && x.x.Ledger.Held() > 0)
}

func (s *chain) NewEpoch(start int64) {
	s.execs = make([]chainExec, s.c.Executors)
	s.standing = make([]agentStanding, s.c.Agents+s.c.Griefers)
	s.excludedWeight, s.queued, s.poolValid = 0, nil, false
}

func (s *chain) State(e int) State {
	x := &s.execs[e]
	switch {
	case x.inactive:
		return Inactive
	case x.x.Record.State == breaker.Excluded:
		return Excluded
	case x.x.Record.State == breaker.Probe:
		return Probing
	}
	return Healthy
}

// BeginBlock is breakerstore.Store.Step: promote, queued traffic, attested,
// service.
func (s *chain) BeginBlock(h int64, votes Votes) {
	s.height = h
	attested := votes.Attested
	s.service = service.View{}
	if s.canaries {
		s.viewService(votes.Service)
	}
	// The step (breakerstore.Store.Step) drops an ok for an executor that has no
	// record and nothing queued: it would change nothing.
	attested = slices.DeleteFunc(slices.Clone(attested), func(a aggregate.Sample) bool {
		return !a.Miss && !s.execs[a.Index].stored && len(s.execs[a.Index].pending) == 0
	})
	for e := range s.execs {
		x := &s.execs[e]
		if x.x.Record.State != breaker.Excluded {
			continue
		}
		var t breaker.Transition
		if x.x.Record, t = breaker.Promote(x.x.Record, h); t.Changed() {
			s.poolValid = false
		}
	}
	queued := s.queued
	s.queued = nil
	slices.Sort(queued) // the store applies them in address order
	for _, e := range queued {
		s.applyBatch(h, e)
	}
	for _, a := range attested {
		s.applyAttested(h, a.Index, a.Miss)
	}
	if s.canaries {
		s.applyService(h)
	}
	if s.each != nil {
		s.each(h)
	}
}

func (s *chain) applyBatch(h int64, e int) {
	x := &s.execs[e]
	batch := x.pending
	x.pending = nil
	if !x.stored {
		x.x = s.fresh(h, e, batch[0].priorOks)
	}
	for _, q := range batch {
		probe := x.x.Record.ProbeInFlight && x.probeID == q.inf.ID
		var effects []judge.Effect
		x.x, effects = judge.Traffic(x.x, judge.Outcome{
			Agent: s.agents[q.inf.Agent], Start: q.inf.Start, End: q.inf.End, Miss: q.inf.Miss, Probe: probe,
		}, s.p, h, s.mayExclude(e, true))
		s.record(e, effects)
	}
	s.save(e)
}

func (s *chain) applyAttested(h int64, e int, miss bool) {
	s.applyValidators(h, e, miss, judge.Attested)
}

// applyValidators applies one sample of a kind the validators attest.
func (s *chain) applyValidators(h int64, e int, miss bool,
	apply func(judge.Executor, bool, judge.Params, int64, judge.MayExclude) (judge.Executor, []judge.Effect),
) {
	x := &s.execs[e]
	if !x.stored && !miss {
		return
	}
	if !x.stored {
		x.x = s.fresh(h, e, breaker.Fill(x.finished))
	}
	var effects []judge.Effect
	x.x, effects = apply(x.x, miss, s.p, h, s.mayExclude(e, false))
	s.record(e, effects)
	s.save(e)
}

// fresh is the step's new record (breakerstore's step.fresh): serving now
// if this block's service rates say so.
func (s *chain) fresh(h int64, e int, priorOks uint32) judge.Executor {
	x := judge.Fresh(priorOks)
	if s.servingNow(e) {
		x.Record.ServiceOKAt = h
	}
	return x
}

// save is breakerstore.Store.save for memory: a record that became plain is
// dropped, and reads back as a fresh executor's.
func (s *chain) save(e int) {
	x := &s.execs[e]
	if !x.x.Record.ProbeInFlight {
		x.probeID, x.probeAgent = 0, ""
	}
	if x.x.Record.Plain() && x.x.Ledger.Empty() {
		x.x, x.stored = judge.Executor{}, false
		return
	}
	x.stored = true
}

// mayExclude is the cap (and a candidate rule's gate on traffic trips).
func (s *chain) mayExclude(e int, traffic bool) judge.MayExclude {
	return func() bool {
		if traffic && s.gate != nil && !s.gate(e) {
			return false
		}
		return breaker.WithinCap(s.excludedWeight, s.weights[e], s.total, uint32(s.params.HealthCbMaxExcludedWeightPct))
	}
}

// record is what health's step and the keeper's ApplyHealth do with the
// judge's effects: the SPRT hears of a counted miss, the agent's standing
// of every miss (judge.Standing), the cap of every state change.
func (s *chain) record(e int, effects []judge.Effect) {
	for _, ef := range effects {
		switch ef.Kind {
		case judge.Counted:
			s.counted++
			if !ef.Serving {
				s.countMiss(e)
			}
		case judge.Held:
			s.held++
		case judge.Moved:
			s.moved(e, ef.Transition)
		}
		if agent, charge, _, miss := judge.Standing(ef); miss {
			switch a := s.agentIndex(agent); {
			case charge > 0:
				s.charge(a)
			case charge < 0:
				s.refund(a)
			}
		}
	}
}

func (s *chain) moved(e int, t breaker.Transition) {
	s.poolValid = false
	out := func(st breaker.State) bool { return st != breaker.Healthy }
	switch {
	case out(t.To) && !out(t.From):
		s.excludedWeight += s.weights[e]
	case !out(t.To) && out(t.From):
		s.excludedWeight -= min(s.excludedWeight, s.weights[e])
	}
}

// countMiss is the keeper's countOutcome for a counted miss: the SPRT.
// The caller skips it for a miss counted while the canaries saw the
// executor serving (judge.Effect.Serving).
func (s *chain) countMiss(e int) {
	x := &s.execs[e]
	x.missed++
	if !x.inactive && s.test.IsDown(x.missed, x.finished) {
		x.inactive, s.poolValid = true, false
	}
}

func (s *chain) agentIndex(name string) int {
	for i, n := range s.agents {
		if n == name {
			return i
		}
	}
	return -1
}

func (s *chain) charge(a int) {
	st := &s.standing[a]
	st.charged++
	if st.charged > s.params.MissAllowance(st.finished) {
		st.stopped = true
	}
}

// HonestStopped is how many honest agents are stopped now (the griefer,
// the last agent, is not one).
func (s *chain) HonestStopped() int {
	n := 0
	for a := 0; a < s.c.Agents; a++ {
		if s.standing[a].stopped {
			n++
		}
	}
	return n
}

func (s *chain) refund(a int) {
	if st := &s.standing[a]; st.charged > 0 {
		st.charged--
	}
}

// queue is breakerstore.Store.QueueOutcome.
func (s *chain) queue(inf *Inference) {
	x := &s.execs[inf.Exec]
	q := pendingOutcome{inf: *inf}
	if !x.stored && len(x.pending) == 0 {
		if !inf.Miss {
			return
		}
		q.priorOks = breaker.Fill(x.finished)
	}
	if len(x.pending) == 0 {
		s.queued = append(s.queued, inf.Exec)
	}
	x.pending = append(x.pending, q)
}

func (s *chain) Finish(_ int64, inf *Inference) {
	s.execs[inf.Exec].finished++
	s.standing[inf.Agent].finished++
	s.queue(inf)
}

func (s *chain) Expire(_ int64, inf *Inference) { s.queue(inf) }
