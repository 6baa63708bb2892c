package sim

import (
	"errors"
	"fmt"

	"github.com/inferenced/inferenced/abci/ve"
	"github.com/inferenced/inferenced/monitor/cusum"
	"github.com/inferenced/inferenced/x/inference/judge"
	"github.com/inferenced/inferenced/x/inference/service"
)

// CanaryConfig is each validator's canary schedule, in blocks (the
// monitor's [health-monitor] canary-* keys, in time, at a block time).
type CanaryConfig struct {
	// Every: a validator canaries each executor once every Every blocks in
	// the background, at a phase of its own; a burst of Window canaries
	// every SuspectEvery blocks follows the chain starting to hold the
	// executor out (EXCLUDED or PROBE), as in the monitor
	// (monitor/canary_schedule.go); the policy may add its own.
	Every, SuspectEvery int64
	// Window canaries per executor; a report needs MinSamples of them
	// younger than TTL blocks.
	Window, MinSamples int
	TTL                int64
	// Policy is how a validator decides to burst and what it reports:
	// "cusum" (the monitor's: each validator runs a CUSUM of its canaries
	// of each executor between the baseline P0 and a degraded P1, in basis
	// points (monitor/cusum), canaries at the suspect rate while the sum is
	// above 0, and reports the window's failed share only once the sum
	// reached H milli-nats, 0% otherwise, until the sum is back at 0) or
	// "burst" (the monitor's policy before it: a burst of Window canaries
	// after a trigger, the window's failed share reported).
	Policy    string
	P0, P1, H int
	// HeldTrigger: a traffic miss the chain holds against the executor
	// (not yet corroborated) also starts a burst, not only the chain
	// holding it out.
	HeldTrigger bool
	// FlagTrigger: validators holding more than 1/3 of the power reporting
	// a rate above 0% for an executor in a block (service.Suspected) also
	// starts a burst at every validator in the next, at most one every
	// FlagCooldown blocks per executor and validator.
	FlagTrigger  bool
	FlagCooldown int64
	// FlagMaxRated: a validator rating more executors than this above 0%
	// counts for none of them in the flag (-1: no limit).
	FlagMaxRated int
}

// DefaultCanaryConfig is the schedule make sim runs: see
// docs/simulation.md, "Canaries", for the candidates it was chosen from.
func DefaultCanaryConfig() CanaryConfig {
	return CanaryConfig{Every: 10, SuspectEvery: 1, Window: 16, MinSamples: 8, TTL: 400, Policy: "cusum", P0: 500, P1: 2_500, H: 4_000, FlagMaxRated: -1}
}

// Validate checks the schedule, one rule per error.
func (c CanaryConfig) Validate() error {
	switch {
	case c.Every < 1 || c.SuspectEvery < 1 || c.SuspectEvery > c.Every:
		return fmt.Errorf("intervals %d and %d: want 1 <= suspect <= background", c.SuspectEvery, c.Every)
	case c.Window < 1 || c.Window > 64:
		return fmt.Errorf("window %d outside 1..64", c.Window)
	case c.MinSamples < 1 || c.MinSamples > c.Window:
		return fmt.Errorf("min samples %d outside 1..window", c.MinSamples)
	case c.TTL < 1:
		return errors.New("ttl must be at least a block")
	case c.Policy != "burst" && c.Policy != "cusum":
		return fmt.Errorf("policy %q: want burst or cusum", c.Policy)
	}
	_, err := cusum.New(c.P0, c.P1, c.H)
	return err
}

// rule is the monitor's CUSUM for the schedule's P0, P1 and H (valid
// once Validate passed: Run validates the config before any world).
func (c CanaryConfig) rule() cusum.Rule {
	r, _ := cusum.New(c.P0, c.P1, c.H)
	return r
}

// canaryReader is a strategy that reads the validators' service rates,
// and tells the monitors which executors the chain holds out or holds
// traffic misses against.
type canaryReader interface {
	ReadsCanaries() bool
	Suspect(e int, held bool) bool
}

// canaryRing is one validator's last canaries of one executor.
type canaryRing struct {
	at    []int64 // oldest first
	miss  []bool
	sent  uint64 // canaries sent so far (their draws' index)
	phase int64
	// burst: canaries left at the suspect interval; marked: the chain
	// held the executor out when last looked at.
	burst  int
	marked bool
	// flagMarked: the last block's service.Suspected flagged the executor;
	// flagBurstAt: the block of the last burst a flag started (0: none).
	flagMarked  bool
	flagBurstAt int64
	// cusum: the cusum policy's state (the monitor's own arithmetic).
	cusum cusum.State
}

// canaries is every validator's canary state, by validator then executor.
type canaries struct {
	rule  cusum.Rule
	rings [][]canaryRing
	// flagged: the last block's service.Suspected, per executor.
	flagged []bool
	sent    uint64 // canaries sent, all validators, this run
}

func newCanaries(c Config) *canaries {
	cs := &canaries{rule: c.Canary.rule(), rings: make([][]canaryRing, c.Validators), flagged: make([]bool, c.Executors)}
	for v := range cs.rings {
		cs.rings[v] = make([]canaryRing, c.Executors)
	}
	return cs
}

// newEpoch starts each validator's view of the executors the plan of the
// epoch starting at start calls honest afresh: the model's faults are
// confined to an epoch (a plan heals its targets at the boundary), so a
// window carried over would hold failures of an executor the new plan
// calls honest; and a monitor that has run for a while holds a full
// window of fresh outcomes, so each ring starts as one (outcomes at the
// baseline rate, one per background interval before start) rather than
// empty, which would leave validators reporting unknown for the first
// window of every epoch.
func (cs *canaries) newEpoch(c Config, p Plan, start int64) {
	clear(cs.flagged)
	for v := range cs.rings {
		for e := range cs.rings[v] {
			r := canaryRing{phase: int64(mix(c.Seed, uint64(v)<<32|uint64(e), 7) % uint64(c.Canary.Every))}
			for k := c.Canary.Window; k > 0; k-- {
				at := start - int64(k)*c.Canary.Every
				miss := int(mix(c.Seed, uint64(v)<<40|uint64(e)<<20|uint64(k), uint64(17+start))%10_000) < p.BaselineBP
				r.at, r.miss = append(r.at, at), append(r.miss, miss)
			}
			cs.rings[v][e] = r
		}
	}
}

// vote is what the validators' extensions of block h say of service,
// aggregated by the chain's own code: each validator canaries as its
// schedule says, reports its rates relative to its own median executor
// (ve.ServiceFloor, service.Clamp), and service.Median takes the
// power-weighted median over the commit (all validators, equal power).
func (cs *canaries) vote(w *world, h int64, s canaryReader) ([]byte, error) {
	c := w.c
	votes := make([]service.Vote, c.Validators)
	reports := make([]service.Report, c.Executors)
	for v := range votes {
		for e := range reports {
			r := &cs.rings[v][e]
			if cs.due(c, r, h, s.Suspect(e, c.Canary.HeldTrigger), c.Canary.FlagTrigger && cs.flagged[e]) {
				cs.send(w, v, e, r, h)
			}
			reports[e] = cs.report(w, v, e, r, h)
		}
		bz, err := service.Attest(reports, ve.ServiceFloor)
		if v < c.Byzantine {
			bz, err = service.Encode(service.Clamp(cs.lie(w, h)))
		}
		if err != nil {
			return nil, err
		}
		votes[v] = service.Vote{Power: 1, Reports: bz}
	}
	if c.Canary.FlagTrigger {
		flagged, err := service.Suspected(votes, uint64(c.Validators), c.Executors, c.Canary.FlagMaxRated)
		if err != nil {
			return nil, err
		}
		cs.flagged = flagged
	}
	return service.Encoded(votes, uint64(c.Validators), c.Executors)
}

// due: every SuspectEvery blocks while a burst lasts, the background
// schedule otherwise. The chain starting to hold the executor out starts
// a burst.
func (cs *canaries) due(c Config, r *canaryRing, h int64, chainSuspect, flagged bool) bool {
	if chainSuspect && !r.marked {
		r.burst = c.Canary.Window
	}
	r.marked = chainSuspect
	if flagged && !r.flagMarked && (r.flagBurstAt == 0 || h-r.flagBurstAt >= c.Canary.FlagCooldown) {
		r.burst, r.flagBurstAt = c.Canary.Window, h
	}
	r.flagMarked = flagged
	if r.burst > 0 || (c.Canary.Policy == "cusum" && r.cusum.Sum > 0) {
		return h%c.Canary.SuspectEvery == r.phase%c.Canary.SuspectEvery
	}
	return h%c.Canary.Every == r.phase
}

// send is one canary: it ends within the block, failed with the
// executor's canary miss rate. A canary to an executor whose health
// endpoint is down is not sent (liveness is the health probe's to report,
// and a dark spell must not linger in the service window after it ends).
func (cs *canaries) send(w *world, v, e int, r *canaryRing, h int64) {
	if w.plan.down(e, h) {
		return
	}
	r.sent++
	cs.sent++
	if r.burst > 0 {
		r.burst--
	}
	miss := int(mix(w.c.Seed, uint64(v)<<40|uint64(e)<<20|r.sent&(1<<20-1), 11)%10_000) < w.plan.canaryMissBP(e, h)
	if miss && !r.freshMiss(h, w.c.Canary.TTL) && w.c.Canary.Policy == "burst" {
		r.burst = w.c.Canary.Window // the first fresh miss: a local trigger
	}
	if w.c.Canary.Policy == "cusum" {
		r.cusum = cs.rule.Step(r.cusum, miss)
	}
	r.at, r.miss = append(r.at, h), append(r.miss, miss)
	if len(r.at) > w.c.Canary.Window {
		r.at, r.miss = r.at[1:], r.miss[1:]
	}
}

// lie is a Byzantine validator's report: the most useful lie, the
// maximum rate for every serving executor and 0% for every failing one
// (clamped, as the extension's bound makes it, to the first few).
func (cs *canaries) lie(w *world, h int64) []service.Report {
	out := make([]service.Report, w.c.Executors)
	for e := range out {
		if w.plan.canaryMissBP(e, h) <= w.plan.BaselineBP {
			out[e] = service.MaxRate
		}
	}
	return out
}

// freshMiss reports whether a canary younger than ttl failed.
func (r *canaryRing) freshMiss(h, ttl int64) bool {
	for i, at := range r.at {
		if r.miss[i] && h-at < ttl {
			return true
		}
	}
	return false
}

// report is validator v's failed share of its fresh canaries of e, or
// Unknown; flaky validators misreport a share of the time.
func (cs *canaries) report(w *world, v, e int, r *canaryRing, h int64) service.Report {
	misses, count := 0, 0
	for i, at := range r.at {
		if h-at < w.c.Canary.TTL {
			count++
			if r.miss[i] {
				misses++
			}
		}
	}
	if count < w.c.Canary.MinSamples {
		return service.Unknown
	}
	rate := service.Rate(misses, count)
	if w.c.Canary.Policy == "cusum" && !r.cusum.Alarmed {
		rate = 0
	}
	switch {
	case v < w.c.Byzantine:
		return rate // lie replaces the whole list
	case v < w.c.Byzantine+w.c.Flaky:
		// Drawn from the canary's own hash, not the monitors' stream, so
		// the liveness votes stay the same under every strategy.
		if x := mix(w.c.Seed, uint64(v)<<40|uint64(e)<<20|uint64(h)&(1<<20-1), 13) % 200; int(x) < 2*w.c.FlakyPct {
			if x%2 == 0 {
				return service.Unknown
			}
			return min(service.MaxRate, rate+25)
		}
	}
	return rate
}

// mix is a SplitMix64 finalizer of the seed, x and k: the same draw on
// every run and under every strategy.
func mix(seed, x, k uint64) uint64 {
	z := seed*0x9e3779b97f4a7c15 ^ x*0xbf58476d1ce4e5b9 ^ k*0x94d049bb133111eb
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

// viewService is the step's: the block's rates decoded once
// (service.NewView); none when they do not fit.
func (s *chain) viewService(rates []byte) {
	view, err := service.NewView(rates, s.c.Executors, s.params.HealthCbServiceExcessPct)
	if err != nil {
		view = service.View{}
	}
	s.service = view
}

// servingNow is the step's: the block's rates see e serving.
func (s *chain) servingNow(e int) bool {
	has, miss := s.service.Sample(e)
	return has && !miss
}

// applyService is the step's service part (breakerstore's serviceSamples
// and applyService): a miss for each executor whose attested rate exceeds
// the peers' median by more than the excess, an ok for each one within
// half of it that the chain holds a record on, nothing in between.
func (s *chain) applyService(h int64) {
	for e := range s.service.Rates {
		if has, miss := s.service.Sample(e); has {
			s.applyValidators(h, e, miss, judge.Service)
		}
	}
}
