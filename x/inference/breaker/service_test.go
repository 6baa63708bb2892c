package breaker

import "testing"

// TestServiceTransitions is the service kind's state machine, one row per
// rule: it trips on its own window; restoring evidence is at least as
// strong as what excluded (a passing health check never restores a
// service exclusion, canaries never restore a traffic one); after a
// service exclusion the canaries decide the probe, which no agent can
// take or spoil.
func TestServiceTransitions(t *testing.T) {
	p := defaults()
	excludedOn := func(k Kind) Record {
		r := Record{}
		for range 3 {
			r, _ = Observe(r, Sample{Kind: k, Miss: true, StartedAt: 1}, p, 1, allow)
		}
		if r.State != Excluded || r.Evidence != k {
			t.Fatalf("setup: %s on %s", r.State, r.Evidence)
		}
		r, _ = Promote(r, r.EligibleAt())
		return r
	}
	probeOn := func(k Kind) Record { return excludedOn(k) }
	for _, tc := range []struct {
		name   string
		start  Record
		sample Sample
		want   State
		reason Reason
	}{
		{"healthy: a service miss alone does not trip", Record{}, Sample{Kind: Service, Miss: true}, Healthy, ReasonNone},
		{"probe on service: a service ok restores", probeOn(Service), Sample{Kind: Service}, Healthy, ReasonServiceOK},
		{"probe on service: a service miss re-excludes", probeOn(Service), Sample{Kind: Service, Miss: true}, Excluded, ReasonProbeMissed},
		{"probe on service: an attested ok (health check) does not restore", probeOn(Service), Sample{Kind: Attested}, Probe, ReasonCooldownPassed},
		{"probe on service: an agent's probe success does not restore (attack: taking the probe)", probeOn(Service),
			Sample{Kind: Traffic, Probe: true, StartedAt: 1 << 40}, Probe, ReasonCooldownPassed},
		{"probe on service: an agent's probe miss does not re-exclude (attack: spoiling the probe)", probeOn(Service),
			Sample{Kind: Traffic, Probe: true, Miss: true, StartedAt: 1 << 40}, Probe, ReasonCooldownPassed},
		{"probe on attested (dark): a service ok restores", probeOn(Attested), Sample{Kind: Service}, Healthy, ReasonServiceOK},
		{"probe on traffic: a service ok restores (the canaries decide; colluders cannot spoil it)", probeOn(Traffic), Sample{Kind: Service}, Healthy, ReasonServiceOK},
		{"probe on traffic: a service miss re-excludes", probeOn(Traffic), Sample{Kind: Service, Miss: true}, Excluded, ReasonProbeMissed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, tr := Observe(tc.start, tc.sample, p, tc.start.Since+1, allow)
			if r.State != tc.want || r.Reason != tc.reason {
				t.Fatalf("%s (%s), want %s (%s); transition %+v", r.State, r.Reason, tc.want, tc.reason, tr)
			}
		})
	}
	t.Run("three service misses in a row trip on service", func(t *testing.T) {
		r := excludedOn(Service)
		if r.State != Probe {
			t.Fatalf("state %s", r.State)
		}
	})
}

// TestServiceProbeOffersNoSlot: a PROBE or EXCLUDED record excluded on
// service is never offered to agents and refuses every start, so the
// canaries alone decide its probe.
func TestServiceProbeOffersNoSlot(t *testing.T) {
	p := defaults()
	r := Record{}
	for range 3 {
		r, _ = Observe(r, Sample{Kind: Service, Miss: true}, p, 10, allow)
	}
	g, ok := GateOf(r)
	if !ok || !g.Excluded() || g.OffersProbe(r.EligibleAt()) {
		t.Fatalf("excluded on service: gate %#x excluded=%v offers at eligibility=%v", g, g.Excluded(), g.OffersProbe(r.EligibleAt()))
	}
	r, _ = Promote(r, r.EligibleAt())
	g, ok = GateOf(r)
	if !ok || g.Excluded() || g.OffersProbe(r.EligibleAt()) {
		t.Fatalf("probe on service: gate %#x offers a slot", g)
	}
	if _, claimed := ClaimProbe(r); claimed {
		t.Fatal("an agent claimed the probe of a service exclusion")
	}
	if !RefusesStart(r, r.Since+5) {
		t.Fatal("a start on a PROBE whose canaries decide was allowed")
	}
}

// TestTrafficTripOfAServingExecutor: while the canaries see an executor
// serving (a service ok in the previous block), its first traffic trip of
// the epoch excludes it for everyone (as fast as without canaries); later
// ones are scoped to the failing agents and leave it HEALTHY, each scope
// twice as long as the last (attack: colluding agents keeping a serving
// executor out of everyone's routing for the epoch).
func TestTrafficTripOfAServingExecutor(t *testing.T) {
	p := defaults()
	trip := func(r Record, h int64) (Record, Transition) {
		r, _ = Observe(r, Sample{Kind: Service}, p, h-1, allow) // the canaries' ok of the block before
		var tr Transition
		for range 3 {
			r, tr = Observe(r, Sample{Kind: Traffic, Miss: true, StartedAt: h}, p, h, allow)
		}
		return r, tr
	}
	r, tr := trip(Record{}, 10)
	if r.State != Excluded || r.Overruled != 1 || tr.Reason != ReasonConsecutiveMisses {
		t.Fatalf("first trip: %s, overruled %d, %s", r.State, r.Overruled, tr.Reason)
	}
	r, _ = Promote(r, r.EligibleAt())
	r, _ = Observe(r, Sample{Kind: Service}, p, r.Since, allow)
	if r.State != Healthy || r.Reason != ReasonServiceOK {
		t.Fatalf("after the cooldown: %s (%s), want restored by the canaries", r.State, r.Reason)
	}
	for i, want := range []uint64{50, 100, 200} {
		h := r.Since + 10 + int64(i)
		r, tr = trip(r, h)
		if r.State != Healthy || tr.Reason != ReasonScoped || tr.Cooldown != want || r.Scopes != uint32(i+1) {
			t.Fatalf("trip %d: %s, %s, scope %d blocks (want %d), scopes %d", i+2, r.State, tr.Reason, tr.Cooldown, want, r.Scopes)
		}
		if r.Windows[Traffic].Count != 0 {
			t.Fatal("the traffic window was not reset by the scope")
		}
	}
	// Without a fresh service ok (no canaries, or they failed it), traffic
	// evidence excludes for everyone as before.
	r.ServiceOKAt = 0
	r, tr = Observe(r, Sample{Kind: Traffic, Miss: true, StartedAt: 1 << 40}, p, 1<<40, allow)
	for range 2 {
		r, tr = Observe(r, Sample{Kind: Traffic, Miss: true, StartedAt: 1 << 40}, p, 1<<40, allow)
	}
	if r.State != Excluded {
		t.Fatalf("without canaries: %s (%s), want EXCLUDED", r.State, tr.Reason)
	}
}
