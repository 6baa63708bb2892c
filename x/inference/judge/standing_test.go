package judge

import (
	"testing"

	"github.com/inferenced/inferenced/x/inference/breaker"
	"github.com/inferenced/inferenced/x/inference/evidence"
)

func TestStandingOfEachEffect(t *testing.T) {
	verdict := func(kind EffectKind, wasHeld, byAttestation bool) Effect {
		return Effect{Kind: kind, Verdict: evidence.Verdict{
			Miss: evidence.Miss{Agent: "a"}, WasHeld: wasHeld, ByAttestation: byAttestation, Excused: kind == Excused,
		}}
	}
	for _, tc := range []struct {
		name         string
		effect       Effect
		charge       int
		corroborated bool
		ok           bool
	}{
		{"counted on other agents' misses when observed: charged", verdict(Counted, false, false), +1, true, true},
		{"counted later on other agents' misses: stays charged", verdict(Counted, true, false), 0, true, true},
		{"counted by attestation when observed: never charged", verdict(Counted, false, true), 0, true, true},
		{"held, then counted by attestation: refunded", verdict(Counted, true, true), -1, true, true},
		{"held, then excused by attestation: refunded", verdict(Excused, true, true), -1, true, true},
		{"excused when observed: nothing", verdict(Excused, false, true), 0, false, true},
		{"held: charged", Effect{Kind: Held, Outcome: Outcome{Agent: "a", Miss: true}}, +1, false, true},
		{"a state change is about no miss", Effect{Kind: Moved, Transition: breaker.Transition{To: breaker.Excluded}}, 0, false, false},
		{"a cap refusal is about no miss", Effect{Kind: CapRefused}, 0, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			agent, charge, corroborated, ok := Standing(tc.effect)
			if ok != tc.ok || charge != tc.charge || corroborated != tc.corroborated {
				t.Fatalf("Standing = (%d, %v, %v), want (%d, %v, %v)", charge, corroborated, ok, tc.charge, tc.corroborated, tc.ok)
			}
			if ok && agent != "a" {
				t.Fatalf("agent %q, want the miss's", agent)
			}
		})
	}
}
