package breakerstore

import (
	"math/rand/v2"
	"testing"

	"github.com/inferenced/inferenced/x/inference/breaker"
)

// Edges lists the transitions whose series exist at zero from the start:
// a random walk through the breaker's core must make every one of them and
// no other, so the list can neither miss an edge (its series would appear
// only on the first event, the empty alert) nor name one the
// breaker never makes.
func TestEdgesAreTheTransitionsTheBreakerMakes(t *testing.T) {
	rule := breaker.TripRule{WindowSamples: 8, MinSamples: 2, ThresholdPct: 25, ConsecutiveMisses: 3}
	p := breaker.Params{Rules: [3]breaker.TripRule{rule, rule, rule}, InitialCooldown: 2, MaxCooldown: 8}
	rng := rand.New(rand.NewPCG(1, 2))
	want := map[breaker.Transition]bool{}
	for _, e := range Edges {
		want[e] = true
	}
	seen := map[breaker.Transition]bool{}
	for walk := 0; walk < 200; walk++ {
		var r breaker.Record
		for h := int64(1); h < 200; h++ {
			var tr breaker.Transition
			if rng.IntN(4) == 0 {
				r, tr = breaker.Promote(r, h)
			} else {
				s := breaker.Sample{Kind: breaker.Kind(rng.IntN(3)), Miss: rng.IntN(2) == 0, Probe: rng.IntN(2) == 0, StartedAt: h}
				r, tr = breaker.Observe(r, s, p, h, func() bool { return rng.IntN(8) != 0 })
			}
			if !tr.Changed() {
				continue
			}
			edge := breaker.Transition{From: tr.From, To: tr.To, Reason: tr.Reason}
			if !want[edge] {
				t.Fatalf("the breaker made %s -> %s (%s), which Edges does not list", edge.From, edge.To, edge.Reason)
			}
			seen[edge] = true
		}
	}
	for _, e := range Edges {
		if !seen[e] {
			t.Errorf("Edges lists %s -> %s (%s), which 200 random walks never made", e.From, e.To, e.Reason)
		}
	}
}
