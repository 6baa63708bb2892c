package breaker

import (
	"math/rand/v2"
	"testing"
)

// TestPropertyRandomSequences drives records through random samples and
// heights and checks the invariants after every step.
func TestPropertyRandomSequences(t *testing.T) {
	p := defaults()
	p.InitialCooldown, p.MaxCooldown = 3, 40
	rng := rand.New(rand.NewPCG(1, 2))
	for run := range 2000 {
		var r Record
		height := int64(1)
		missPct := rng.IntN(101)
		for step := range 200 {
			height += int64(rng.IntN(3))
			before := r
			var tr Transition
			switch rng.IntN(4) {
			case 0:
				r, tr = Promote(r, height)
			case 1:
				r, _ = ClaimProbe(r)
			default:
				s := Sample{Kind: Kind(rng.IntN(2)), Miss: rng.IntN(100) < missPct, StartedAt: height - int64(rng.IntN(4))}
				s.Probe = s.Kind == Traffic && before.ProbeInFlight && rng.IntN(2) == 0
				r, tr = Observe(r, s, p, height, func() bool { return rng.IntN(4) != 0 })
				if s.Kind == Traffic && s.StartedAt < before.Since && r != before {
					t.Fatalf("run %d step %d: a stale outcome changed the record", run, step)
				}
			}
			checkInvariants(t, run, step, p, before, r, tr, height)
		}
	}
}

func checkInvariants(t *testing.T, run, step int, p Params, before, r Record, tr Transition, height int64) {
	t.Helper()
	fail := func(msg string) {
		t.Fatalf("run %d step %d: %s\nbefore %+v\nafter  %+v\ntransition %+v", run, step, msg, before, r, tr)
	}
	if r.State != Healthy && (r.Cooldown < p.InitialCooldown || r.Cooldown > p.MaxCooldown) {
		fail("cooldown outside [initial, max]")
	}
	if tr.Changed() && (r.Windows != [numKinds]Window{} || r.Since != height) {
		fail("a state change kept old samples or did not stamp its height")
	}
	if r.State == Excluded && r.ExcludedAt != r.Since {
		fail("excluded record's exclusion height is not its state height")
	}
	if r.ProbeInFlight && r.State != Probe {
		fail("probe slot held outside PROBE")
	}
	if before.State == Excluded && r.State == Healthy {
		fail("EXCLUDED went straight to HEALTHY")
	}
	if before.State == Healthy && r.State == Probe {
		fail("HEALTHY went straight to PROBE")
	}
	if r.State == Probe && before.State == Excluded && height < before.EligibleAt() {
		fail("promoted before the cooldown passed")
	}
	if r.Exclusions < before.Exclusions || r.CapRefusals < before.CapRefusals {
		fail("counters went down")
	}
	if tr.To == Excluded && tr.From == Probe && r.Cooldown < before.Cooldown {
		fail("re-exclusion shortened the cooldown")
	}
}
