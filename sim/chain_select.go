package sim

import (
	"github.com/inferenced/inferenced/x/inference/breaker"
	"github.com/inferenced/inferenced/x/inference/judge"
	"github.com/inferenced/inferenced/x/inference/lottery"
	"github.com/inferenced/inferenced/x/inference/types"
)

// Start is the keeper's StartInference: the agent's standing, the
// selection the client asked for (the filter chain and its fallback), the
// routing check and the probe slot.
func (s *chain) Start(h int64, inf *Inference, seed uint64) bool {
	if s.standing[inf.Agent].stopped {
		return false
	}
	if inf.Exec < 0 {
		e, ok := s.draw(seed)
		if !ok {
			return false
		}
		inf.Exec = e
	}
	x := &s.execs[inf.Exec]
	if x.inactive {
		return false
	}
	// The keeper's checkScope: an agent a scoped traffic trip keeps off
	// the executor is refused (the agent draws again elsewhere).
	if s.params.HealthCbEnforce && x.x.Scope.Refuses(s.agents[inf.Agent], h) {
		return false
	}
	// The keeper's CheckRoutable lets a start the breaker refuses through
	// only while the model is in the all-filtered-out fallback (in shadow
	// mode it asks nobody).
	if s.params.HealthCbEnforce && breaker.RefusesStart(x.x.Record, h) {
		return s.inFallback()
	}
	claimed, claim := judge.ClaimProbe(x.x, s.agents[inf.Agent])
	switch claim {
	case judge.NoProbe:
		return true
	case judge.Refused:
		return !s.params.HealthCbEnforce // shadow mode: a start, not a probe
	}
	x.x.Record, x.probeID, x.probeAgent, x.stored = claimed, inf.ID, s.agents[inf.Agent], true
	inf.Probe = true
	s.poolValid = false
	return true
}

// draw is the keeper's RandomExecutor: ACTIVE members at their weight, the
// health stage (EXCLUDED out, a free PROBE at the probe weight), the
// fallback to the pool before the health stage, and the seeded lottery.
func (s *chain) draw(seed uint64) (int, bool) {
	s.inFallback() // builds the pool if it is stale
	if len(s.pool) == 0 {
		return 0, false
	}
	i, err := lottery.Draw(s.poolW, seed)
	if err != nil {
		return 0, false
	}
	return s.pool[i], true
}

func (s *chain) buildPool() {
	s.pool, s.poolW = s.pool[:0], s.poolW[:0]
	var before []int
	var beforeW []uint64
	var probes []int
	var healthyWeight, healthy uint64
	for e := range s.execs {
		x := &s.execs[e]
		if x.inactive || s.weights[e] == 0 {
			continue
		}
		before, beforeW = append(before, e), append(beforeW, s.weights[e])
		g, gated := breaker.GateOf(x.x.Record)
		switch {
		case !s.params.HealthCbEnforce || !gated:
			healthyWeight = types.AddWeight(healthyWeight, s.weights[e])
			healthy++
		case g.OffersProbe(s.height):
			probes = append(probes, len(s.pool))
		default:
			continue
		}
		s.pool, s.poolW = append(s.pool, e), append(s.poolW, s.weights[e])
	}
	w := breaker.ProbeWeight(healthyWeight, healthy)
	for _, i := range probes {
		s.poolW[i] = min(s.poolW[i], w)
	}
	s.fallback = len(s.pool) == 0
	if s.fallback {
		s.pool, s.poolW = before, beforeW
	}
	s.poolValid, s.poolHeight = true, s.height
}

func (s *chain) inFallback() bool {
	if !s.poolValid || s.height != s.poolHeight {
		s.buildPool()
	}
	return s.fallback
}
