package breaker

import (
	"math"
	"testing"
)

func defaults() Params {
	rule := TripRule{WindowSamples: 16, MinSamples: 4, ThresholdPct: 25, ConsecutiveMisses: 3}
	return Params{Rules: [numKinds]TripRule{rule, rule, rule}, InitialCooldown: 50, MaxCooldown: 500}
}

func allow() bool { return true }

// feed applies traffic samples ("o" ok, "m" miss) to a fresh record.
func feed(t *testing.T, r Record, p Params, pattern string, height int64) (Record, Transition) {
	t.Helper()
	var tr Transition
	for _, c := range pattern {
		r, tr = Observe(r, Sample{Kind: Traffic, Miss: c == 'm', StartedAt: height}, p, height, allow)
	}
	return r, tr
}

func TestTripRule(t *testing.T) {
	p := defaults()
	p.Rules[Traffic].ConsecutiveMisses = 64 // isolate the rate rule where asked
	cases := []struct {
		name    string
		pattern string
		consec  uint32
		want    State
		reason  Reason
	}{
		{"50% over 4 samples trips", "momo", 64, Excluded, ReasonMissRate},
		{"exactly 25% over 4 does not trip", "mooo", 64, Healthy, ReasonNone},
		{"exactly 25% over 16 does not trip", "ooomooomooomooom", 64, Healthy, ReasonNone},
		{"5 of the last 16 trips", "ooomooomooomooomm", 64, Excluded, ReasonMissRate},
		{"3 samples never trip on rate", "mmo", 64, Healthy, ReasonNone},
		{"2 of 3 misses stay below min samples", "omm", 64, Healthy, ReasonNone},
		{"3 consecutive misses trip", "mmm", 3, Excluded, ReasonConsecutiveMisses},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := p
			p.Rules[Traffic].ConsecutiveMisses = c.consec
			r, tr := feed(t, Record{}, p, c.pattern, 10)
			if r.State != c.want {
				t.Fatalf("state %s, want %s", r.State, c.want)
			}
			if c.want == Excluded && tr.Reason != c.reason {
				t.Fatalf("reason %s, want %s", tr.Reason, c.reason)
			}
		})
	}
}

func TestWindowSlides(t *testing.T) {
	var w Window
	for range 20 {
		w = w.Push(true)
	}
	for range 16 {
		w = w.Push(false)
	}
	if s, m := w.Last(16); s != 16 || m != 0 {
		t.Fatalf("last 16 after 16 oks: %d samples %d misses", s, m)
	}
	if s, m := w.Last(64); s != 36 || m != 20 {
		t.Fatalf("last 64: %d samples %d misses, want 36, 20", s, m)
	}
	if w.TrailingMisses() != 0 || !w.HasMiss() {
		t.Fatalf("trailing %d, has miss %v", w.TrailingMisses(), w.HasMiss())
	}
	for range 100 {
		w = w.Push(true)
	}
	if s, m := w.Last(64); s != 64 || m != 64 || w.TrailingMisses() != 64 {
		t.Fatalf("full window of misses: %d/%d trailing %d", s, m, w.TrailingMisses())
	}
}

func TestThreeConsecutiveMissesTripAfterLongSuccessHistory(t *testing.T) {
	history := ""
	for range 200 {
		history += "o"
	}
	r, tr := feed(t, Record{}, defaults(), history+"mm", 7)
	if r.State != Healthy {
		t.Fatalf("two misses after 200 successes: %s", r.State)
	}
	r, tr = feed(t, r, defaults(), "m", 7)
	if r.State != Excluded || tr.Reason != ReasonConsecutiveMisses {
		t.Fatalf("third miss: %s by %s, want EXCLUDED by consecutive_misses", r.State, tr.Reason)
	}
}

func TestLifecycle(t *testing.T) {
	p := defaults()
	type step struct {
		name   string
		height int64
		act    func(Record) (Record, Transition)
		state  State
		reason Reason
		cool   uint64
	}
	obs := func(kind Kind, miss, probe bool, h int64) func(Record) (Record, Transition) {
		return func(r Record) (Record, Transition) {
			return Observe(r, Sample{Kind: kind, Miss: miss, Probe: probe, StartedAt: h}, p, h, allow)
		}
	}
	promote := func(h int64) func(Record) (Record, Transition) {
		return func(r Record) (Record, Transition) { return Promote(r, h) }
	}
	steps := []step{
		{"miss 1", 10, obs(Traffic, true, false, 10), Healthy, ReasonNone, 0},
		{"miss 2", 10, obs(Traffic, true, false, 10), Healthy, ReasonNone, 0},
		{"miss 3 trips", 11, obs(Traffic, true, false, 11), Excluded, ReasonConsecutiveMisses, 50},
		{"stale ok while excluded is ignored", 12, obs(Traffic, false, false, 12), Excluded, ReasonConsecutiveMisses, 50},
		{"attested ok while excluded is ignored", 12, obs(Attested, false, false, 12), Excluded, ReasonConsecutiveMisses, 50},
		{"cooldown not yet passed", 60, promote(60), Excluded, ReasonConsecutiveMisses, 50},
		{"cooldown passed", 61, promote(61), Probe, ReasonCooldownPassed, 50},
		{"non-probe ok does not restore", 62, obs(Traffic, false, false, 62), Probe, ReasonCooldownPassed, 50},
		{"non-probe miss does not re-exclude", 62, obs(Traffic, true, false, 62), Probe, ReasonCooldownPassed, 50},
		{"health check does not restore a traffic exclusion", 62, obs(Attested, false, false, 62), Probe, ReasonCooldownPassed, 50},
		{"probe miss doubles the cooldown", 63, obs(Traffic, true, true, 63), Excluded, ReasonProbeMissed, 100},
		{"promoted again after 100", 163, promote(163), Probe, ReasonCooldownPassed, 100},
		{"probe success restores", 165, obs(Traffic, false, true, 165), Healthy, ReasonProbeSucceeded, 100},
	}
	var r Record
	for _, s := range steps {
		var tr Transition
		r, tr = s.act(r)
		if r.State != s.state || r.Reason != s.reason || r.Cooldown != s.cool {
			t.Fatalf("%s: got %s/%s/cooldown %d, want %s/%s/%d (transition %+v)",
				s.name, r.State, r.Reason, r.Cooldown, s.state, s.reason, s.cool, tr)
		}
	}
	if r.Windows != [numKinds]Window{} {
		t.Fatalf("restored record keeps old samples: %+v", r.Windows)
	}
	if r.Exclusions != 2 {
		t.Fatalf("exclusions %d, want 2", r.Exclusions)
	}
}

func TestRestoredNodeIsNotReExcludedByOldMisses(t *testing.T) {
	p := defaults()
	r, _ := feed(t, Record{}, p, "momom", 5) // 3 of 5: tripped on rate
	if r.State != Excluded {
		t.Fatalf("setup: %s", r.State)
	}
	r, _ = Promote(r, 55)
	r, _ = Observe(r, Sample{Kind: Traffic, Probe: true, StartedAt: 55}, p, 56, allow)
	// One miss after recovery: with the old window it would be 4 of 7.
	r, tr := feed(t, r, p, "m", 57)
	if r.State != Healthy {
		t.Fatalf("old misses re-excluded a restored node: %+v", tr)
	}
	if s, m := r.Windows[Traffic].Last(16); s != 1 || m != 1 {
		t.Fatalf("window after restore holds %d samples, %d misses; want 1, 1", s, m)
	}
}

// An outcome of an inference started before the last state change is
// stale: it neither restores a PROBE nor re-trips a restored executor.
func TestStaleTrafficIsIgnoredInEveryState(t *testing.T) {
	p := defaults()
	r, _ := feed(t, Record{}, p, "mmm", 10) // EXCLUDED at 10
	r, _ = Promote(r, 60)
	stale := Sample{Kind: Traffic, StartedAt: 9}
	if r2, tr := Observe(r, Sample{Kind: Traffic, Probe: true, StartedAt: 9}, p, 61, allow); tr.Changed() || r2 != r {
		t.Fatalf("a stale outcome marked probe restored the executor: %+v", tr)
	}
	r, _ = Observe(r, Sample{Kind: Traffic, Probe: true, StartedAt: 60}, p, 61, allow)
	if r.State != Healthy {
		t.Fatalf("probe success: %s", r.State)
	}
	stale.Miss = true
	for range 5 {
		r, _ = Observe(r, stale, p, 62, allow)
	}
	if r.State != Healthy || r.Windows[Traffic].Count != 0 {
		t.Fatalf("misses of requests sent before the recovery counted: %+v", r)
	}
	r, _ = Observe(r, Sample{Kind: Traffic, Miss: true, StartedAt: 61}, p, 62, allow)
	if s, m := r.Windows[Traffic].Last(16); s != 1 || m != 1 {
		t.Fatalf("a request started after the recovery must count: %d samples %d misses", s, m)
	}
}

func TestAttestedExclusionRestoredByAttestedOK(t *testing.T) {
	p := defaults()
	var r Record
	for range 3 {
		r, _ = Observe(r, Sample{Kind: Attested, Miss: true}, p, 20, allow)
	}
	if r.State != Excluded || r.Evidence != Attested {
		t.Fatalf("attested misses: %s evidence %s", r.State, r.Evidence)
	}
	r, _ = Promote(r, 70)
	r, tr := Observe(r, Sample{Kind: Attested}, p, 71, allow)
	if r.State != Healthy || tr.Reason != ReasonAttestedOK {
		t.Fatalf("attested ok in PROBE: %s by %s", r.State, tr.Reason)
	}
}

func TestAttestedMissInProbeReExcludes(t *testing.T) {
	p := defaults()
	r, _ := feed(t, Record{}, p, "mmm", 1)
	r, _ = Promote(r, 51)
	r, tr := Observe(r, Sample{Kind: Attested, Miss: true}, p, 52, allow)
	if r.State != Excluded || r.Cooldown != 100 || r.Evidence != Attested || tr.Reason != ReasonProbeMissed {
		t.Fatalf("attested miss in PROBE: %+v", r)
	}
}

func TestCooldownDoublesAndCapsAtMax(t *testing.T) {
	p := defaults()
	r, _ := feed(t, Record{}, p, "mmm", 1)
	var got []uint64
	for range 7 {
		got = append(got, r.Cooldown)
		h := r.EligibleAt()
		r, _ = Promote(r, h)
		r, _ = Observe(r, Sample{Kind: Traffic, Miss: true, Probe: true, StartedAt: h}, p, h+1, allow)
	}
	want := []uint64{50, 100, 200, 400, 500, 500, 500}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("cooldowns %v, want %v", got, want)
		}
	}
}

func TestNextCooldownStaysWithinBoundsWhenParamsChange(t *testing.T) {
	p := defaults()
	cases := []struct {
		prev       uint64
		exclusions uint32
		want       uint64
	}{
		{0, 0, 50},
		{50, 1, 100},
		{300, 1, 500},
		{10, 1, 50},                  // initial raised since: never below it
		{math.MaxUint64, 3, 500},     // never overflows
		{math.MaxUint64 / 2, 9, 500}, // doubling near the top
	}
	for _, c := range cases {
		if got := NextCooldown(Record{Cooldown: c.prev, Exclusions: c.exclusions}, p); got != c.want {
			t.Errorf("NextCooldown(prev %d, exclusions %d) = %d, want %d", c.prev, c.exclusions, got, c.want)
		}
	}
}

func TestCapRefusalKeepsHealthyAndCounts(t *testing.T) {
	p := defaults()
	var r Record
	var tr Transition
	for range 3 {
		r, tr = Observe(r, Sample{Kind: Traffic, Miss: true, StartedAt: 9}, p, 9, func() bool { return false })
	}
	if r.State != Healthy || tr.Reason != ReasonCapRefused || r.CapRefusals != 1 {
		t.Fatalf("capped exclusion: state %s reason %s refusals %d", r.State, tr.Reason, r.CapRefusals)
	}
	r, tr = Observe(r, Sample{Kind: Traffic, Miss: true, StartedAt: 10}, p, 10, allow)
	if r.State != Excluded {
		t.Fatalf("once the cap allows it the executor is excluded: %+v", tr)
	}
}

func TestClaimProbeHoldsOneSlot(t *testing.T) {
	r := Record{State: Probe}
	r, ok := ClaimProbe(r)
	if !ok {
		t.Fatal("free slot refused")
	}
	if _, ok := ClaimProbe(r); ok {
		t.Fatal("second probe admitted while the first is in flight")
	}
	if _, ok := ClaimProbe(Record{State: Excluded}); ok {
		t.Fatal("EXCLUDED executor took a probe slot")
	}
}

func TestReleaseProbeFreesTheSlotAndKeepsProbe(t *testing.T) {
	r, _ := ClaimProbe(Record{State: Probe, Since: 7})
	r = ReleaseProbe(r)
	if r.State != Probe || r.ProbeInFlight || r.Since != 7 {
		t.Fatalf("released record %+v", r)
	}
	if _, ok := ClaimProbe(r); !ok {
		t.Fatal("a released slot is not offered again")
	}
	if got := ReleaseProbe(Record{State: Excluded}); got != (Record{State: Excluded}) {
		t.Fatalf("ReleaseProbe changed an EXCLUDED record: %+v", got)
	}
}

func TestPlain(t *testing.T) {
	r, _ := feed(t, Record{}, defaults(), "oooo", 1)
	if !r.Plain() {
		t.Fatal("all-ok record needs storage")
	}
	r, _ = feed(t, r, defaults(), "m", 1)
	if r.Plain() {
		t.Fatal("record with a recent miss reported plain")
	}
}

func TestUnknownKindIsIgnored(t *testing.T) {
	r, tr := Observe(Record{}, Sample{Kind: Kind(9), Miss: true}, defaults(), 1, allow)
	if tr.Changed() || r != (Record{}) {
		t.Fatalf("unknown sample kind changed the record: %+v", r)
	}
}

func TestWithinCap(t *testing.T) {
	cases := []struct {
		excluded, w, total uint64
		pct                uint32
		want               bool
	}{
		{0, 50, 100, 50, true},
		{0, 51, 100, 50, false},
		{25, 25, 100, 50, true},
		{1, 1, 3, 50, false},
		{0, 100, 100, 100, true},
		{math.MaxUint64, 1, math.MaxUint64, 100, false},
		{math.MaxUint64 - 1, 1, math.MaxUint64, 100, true},
	}
	for _, c := range cases {
		if got := WithinCap(c.excluded, c.w, c.total, c.pct); got != c.want {
			t.Errorf("WithinCap(%d, %d, %d, %d) = %v, want %v", c.excluded, c.w, c.total, c.pct, got, c.want)
		}
	}
}

func TestParamsValidate(t *testing.T) {
	mut := func(f func(*Params)) Params { p := defaults(); f(&p); return p }
	cases := []struct {
		name string
		p    Params
		ok   bool
	}{
		{"defaults", defaults(), true},
		{"threshold 0", mut(func(p *Params) { p.Rules[Traffic].ThresholdPct = 0 }), false},
		{"threshold 101", mut(func(p *Params) { p.Rules[Attested].ThresholdPct = 101 }), false},
		{"min samples 0", mut(func(p *Params) { p.Rules[Traffic].MinSamples = 0 }), false},
		{"min samples above window", mut(func(p *Params) { p.Rules[Traffic].MinSamples = 17 }), false},
		{"window 65", mut(func(p *Params) { p.Rules[Traffic].WindowSamples = 65; p.Rules[Traffic].MinSamples = 4 }), false},
		{"window 64", mut(func(p *Params) { p.Rules[Traffic].WindowSamples = 64 }), true},
		{"consecutive 0", mut(func(p *Params) { p.Rules[Traffic].ConsecutiveMisses = 0 }), false},
		{"consecutive 65", mut(func(p *Params) { p.Rules[Traffic].ConsecutiveMisses = 65 }), false},
		{"initial 0", mut(func(p *Params) { p.InitialCooldown = 0 }), false},
		{"initial above max", mut(func(p *Params) { p.InitialCooldown = 501 }), false},
		{"initial equal max", mut(func(p *Params) { p.InitialCooldown = 500 }), true},
	}
	for _, c := range cases {
		if err := c.p.Validate(); (err == nil) != c.ok {
			t.Errorf("%s: err %v, want ok=%v", c.name, err, c.ok)
		}
	}
}
