package sim

import (
	"errors"
	"fmt"

	"github.com/inferenced/inferenced/abci/ve"
	"github.com/inferenced/inferenced/x/inference/judge"
	"github.com/inferenced/inferenced/x/inference/service"
)

// CanaryConfig is each validator's canary schedule, in blocks (the
// monitor's [health-monitor] canary-* keys, in time, at a block time).
type CanaryConfig struct {
	// Every: a validator canaries each executor once every Every blocks in
	// the background, at a phase of its own; SuspectEvery while the
	// executor is suspect (the chain holds a breaker record on it, or one
	// of this validator's own last Window canaries of it failed).
	Every, SuspectEvery int64
	// Window canaries per executor; a report needs MinSamples of them
	// younger than TTL blocks.
	Window, MinSamples int
	TTL                int64
	// SuspectMisses: misses in a validator's own window that make it
	// canary the executor at the suspect interval.
	SuspectMisses int
}

// DefaultCanaryConfig is the schedule make sim runs: see
// docs/simulation.md, "Canaries", for the candidates it was chosen from.
func DefaultCanaryConfig() CanaryConfig {
	return CanaryConfig{Every: 20, SuspectEvery: 1, Window: 16, MinSamples: 8, TTL: 400, SuspectMisses: 2}
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
	case c.SuspectMisses < 0 || c.SuspectMisses > c.Window:
		return fmt.Errorf("suspect misses %d outside 0..window (0: never suspect locally)", c.SuspectMisses)
	}
	return nil
}

// canaryReader is a strategy that reads the validators' service rates,
// and tells the monitors which executors the chain holds a record on.
type canaryReader interface {
	ReadsCanaries() bool
	Suspect(e int) bool
}

// canaryRing is one validator's last canaries of one executor.
type canaryRing struct {
	at    []int64 // oldest first
	miss  []bool
	sent  uint64 // canaries sent so far (their draws' index)
	phase int64
}

// canaries is every validator's canary state, by validator then executor.
type canaries struct {
	rings [][]canaryRing
	sent  uint64 // canaries sent, all validators, this run
}

func newCanaries(c Config) *canaries {
	cs := &canaries{rings: make([][]canaryRing, c.Validators)}
	cs.newEpoch(c)
	return cs
}

// newEpoch forgets every canary: the model's faults are confined to an
// epoch (a plan heals its targets at the boundary), so a window carried
// over would hold failures of an executor the new plan calls honest.
func (cs *canaries) newEpoch(c Config) {
	for v := range cs.rings {
		cs.rings[v] = make([]canaryRing, c.Executors)
		for e := range cs.rings[v] {
			cs.rings[v][e].phase = int64(mix(c.Seed, uint64(v)<<32|uint64(e), 7) % uint64(c.Canary.Every))
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
			if cs.due(c, r, h, s.Suspect(e)) {
				cs.send(w, v, e, r, h)
			}
			reports[e] = cs.report(w, v, e, r, h)
		}
		attested := service.Relative(reports, ve.ServiceFloor)
		if v < c.Byzantine {
			attested = cs.lie(w, h)
		}
		bz, err := service.Encode(service.Clamp(attested))
		if err != nil {
			return nil, err
		}
		votes[v] = service.Vote{Power: 1, Reports: bz}
	}
	return service.Encoded(votes, uint64(c.Validators), c.Executors)
}

// due: the background schedule, or every SuspectEvery blocks while the
// chain holds the executor out (EXCLUDED or PROBE) or this validator's own
// window holds at least SuspectMisses misses.
func (cs *canaries) due(c Config, r *canaryRing, h int64, chainSuspect bool) bool {
	misses := 0
	for _, m := range r.miss {
		if m {
			misses++
		}
	}
	suspect := chainSuspect || (c.Canary.SuspectMisses > 0 && misses >= c.Canary.SuspectMisses)
	if suspect {
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
	miss := int(mix(w.c.Seed, uint64(v)<<40|uint64(e)<<20|r.sent&(1<<20-1), 11)%10_000) < w.plan.canaryMissBP(e, h)
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

// viewService is breakerstore's viewService: the block's rates decoded
// once, with the peers' limits (a miss above miss, an ok at or below ok).
func (s *chain) viewService(rates []byte) {
	s.service = serviceView{}
	if len(rates) == 0 {
		return
	}
	median, ok, err := service.PeerMedian(rates, s.c.Executors)
	if err != nil || !ok {
		return
	}
	decoded, err := service.Decode(rates, s.c.Executors)
	if err != nil {
		return
	}
	excess := s.params.HealthCbServiceExcessPct
	s.service = serviceView{rates: decoded, miss: uint64(median) + excess, ok: uint64(median) + excess/2}
}

// serviceView is one block's service rates and limits (breakerstore's).
type serviceView struct {
	rates    []service.Report
	miss, ok uint64
}

// sample is executor e's service sample: whether there is one, and a miss.
func (v serviceView) sample(e int) (has, miss bool) {
	if e >= len(v.rates) || !v.rates[e].Known() {
		return false, false
	}
	r := uint64(v.rates[e])
	return r > v.miss || r <= v.ok, r > v.miss
}

// servingNow is the step's: the block's rates see e serving.
func (s *chain) servingNow(e int) bool {
	has, miss := s.service.sample(e)
	return has && !miss
}

// applyService is the step's service part (breakerstore's serviceSamples
// and applyService): a miss for each executor whose attested rate exceeds
// the peers' median by more than the excess, an ok for each one within
// half of it that the chain holds a record on, nothing in between.
func (s *chain) applyService(h int64) {
	for e := range s.service.rates {
		if has, miss := s.service.sample(e); has {
			s.applyValidators(h, e, miss, judge.Service)
		}
	}
}
