package judge

import (
	"slices"
	"testing"

	"github.com/inferenced/inferenced/x/inference/breaker"
	"github.com/inferenced/inferenced/x/inference/evidence"
)

// params trip a traffic window of 8 on 3 misses in a row (or >50% over 4+)
// and an attested one on 2 in a row; misses need two agents.
var params = Params{
	Breaker: breaker.Params{
		Rules: [3]breaker.TripRule{
			breaker.Traffic:  {WindowSamples: 8, MinSamples: 4, ThresholdPct: 50, ConsecutiveMisses: 3},
			breaker.Attested: {WindowSamples: 8, MinSamples: 4, ThresholdPct: 50, ConsecutiveMisses: 2},
			breaker.Service:  {WindowSamples: 8, MinSamples: 4, ThresholdPct: 50, ConsecutiveMisses: 3},
		},
		InitialCooldown: 10, MaxCooldown: 40,
	},
	Evidence: evidence.Params{Window: 8, MinAgents: 2},
}

// step is one input of a table row: a traffic outcome or an attested
// verdict (attested set), at height.
type step struct {
	height   int64
	outcome  Outcome
	attested bool
	miss     bool // attested verdict
}

func traffic(h int64, agent string, start int64, miss bool) step {
	end := h
	return step{height: h, outcome: Outcome{Agent: agent, Start: start, End: end, Miss: miss}}
}

func attested(h int64, miss bool) step { return step{height: h, attested: true, miss: miss} }

func kinds(effects []Effect) []EffectKind {
	var out []EffectKind
	for _, e := range effects {
		out = append(out, e.Kind)
	}
	return out
}

func TestJudge(t *testing.T) {
	always := func() bool { return true }
	never := func() bool { return false }
	cases := []struct {
		name       string
		mayExclude MayExclude
		steps      []step
		last       []EffectKind // effects of the last step
		state      breaker.State
		reason     breaker.Reason
		refusals   uint32
	}{
		{"a success changes nothing it need record", always,
			[]step{traffic(5, "a", 4, false)}, nil, breaker.Healthy, breaker.ReasonNone, 0},
		{"attack: one agent's miss is held, never counted", always,
			[]step{traffic(11, "g", 1, true)}, []EffectKind{Held}, breaker.Healthy, breaker.ReasonNone, 0},
		{"a second agent's overlapping miss counts both, oldest first", always,
			[]step{traffic(11, "a", 1, true), traffic(12, "b", 2, true)},
			[]EffectKind{Counted, Counted}, breaker.Healthy, breaker.ReasonNone, 0},
		{"corroborated misses in a row trip the traffic rule and say so", always,
			[]step{traffic(11, "a", 1, true), traffic(12, "b", 2, true), traffic(13, "a", 3, true), traffic(14, "b", 4, true)},
			[]EffectKind{Counted, Moved, Counted}, breaker.Excluded, breaker.ReasonConsecutiveMisses, 0},
		{"the cap's refusal keeps the executor HEALTHY", never,
			[]step{traffic(11, "a", 1, true), traffic(12, "b", 2, true), traffic(13, "a", 3, true), traffic(14, "b", 4, true)},
			[]EffectKind{Counted, CapRefused, Counted, CapRefused}, breaker.Healthy, breaker.ReasonNone, 2},
		{"an attested miss counts the held miss in flight, then is observed", always,
			[]step{traffic(11, "g", 1, true), attested(12, true)},
			[]EffectKind{Counted}, breaker.Healthy, breaker.ReasonNone, 0},
		{"two attested misses in a row exclude on attested evidence", always,
			[]step{attested(5, true), attested(6, true)},
			[]EffectKind{Moved}, breaker.Excluded, breaker.ReasonConsecutiveMisses, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var x Executor
			x.Record.Windows[breaker.Traffic] = breaker.Prefilled(8)
			x.Record.Windows[breaker.Attested] = breaker.Prefilled(8)
			var effects []Effect
			for _, s := range tc.steps {
				if s.attested {
					x, effects = Attested(x, s.miss, params, s.height, tc.mayExclude)
				} else {
					x, effects = Traffic(x, s.outcome, params, s.height, tc.mayExclude)
				}
			}
			if got := kinds(effects); !slices.Equal(got, tc.last) {
				t.Fatalf("effects of the last step: got %v, want %v", got, tc.last)
			}
			if x.Record.State != tc.state || x.Record.Reason != tc.reason || x.Record.CapRefusals != tc.refusals {
				t.Fatalf("record: got %s/%s with %d cap refusals, want %s/%s with %d",
					x.Record.State, x.Record.Reason, x.Record.CapRefusals, tc.state, tc.reason, tc.refusals)
			}
		})
	}
}

// TestProbe: the probe's outcome decides the probe; a probe miss nothing
// corroborates releases the slot instead of re-excluding (attack: an
// agent that lets its probe expire cannot keep the executor out).
func TestProbe(t *testing.T) {
	var x Executor
	x.Record = breaker.Record{State: breaker.Probe, Since: 100, ProbeInFlight: true, Evidence: breaker.Traffic}
	held, effects := Traffic(x, Outcome{Agent: "g", Start: 101, End: 111, Miss: true, Probe: true}, params, 112, nil)
	if held.Record.State != breaker.Probe || held.Record.ProbeInFlight || !slices.Equal(kinds(effects), []EffectKind{Held}) {
		t.Fatalf("held probe miss: state %s, in flight %v, effects %v", held.Record.State, held.Record.ProbeInFlight, kinds(effects))
	}
	ok, effects := Traffic(x, Outcome{Agent: "a", Start: 101, End: 102, Probe: true}, params, 103, nil)
	if ok.Record.State != breaker.Healthy || ok.Record.Reason != breaker.ReasonProbeSucceeded || !slices.Equal(kinds(effects), []EffectKind{Moved}) {
		t.Fatalf("probe success: state %s/%s, effects %v", ok.Record.State, ok.Record.Reason, kinds(effects))
	}
	if effects[0].Transition.From != breaker.Probe || effects[0].Transition.To != breaker.Healthy {
		t.Fatalf("transition %+v", effects[0].Transition)
	}
}
