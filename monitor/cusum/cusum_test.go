package cusum

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestNewSteps(t *testing.T) {
	cases := []struct {
		p0, p1, h   int
		miss, ok    int
		errExpected bool
	}{
		{500, 2_500, 4_000, 1_609, 236, false}, // the monitor's default, 5% / 25%
		{100, 200, 1, 693, 10, false},
		{1, 9_999, 100_000, 9_210, 9_210, false},
		{0, 2_500, 4_000, 0, 0, true},
		{500, 500, 4_000, 0, 0, true},
		{2_500, 500, 4_000, 0, 0, true},
		{500, 10_000, 4_000, 0, 0, true},
		{500, 2_500, 0, 0, 0, true},
	}
	for _, c := range cases {
		r, err := New(c.p0, c.p1, c.h)
		if c.errExpected {
			if err == nil {
				t.Errorf("New(%d, %d, %d) accepted", c.p0, c.p1, c.h)
			}
			continue
		}
		if err != nil || r.Miss != c.miss || r.OK != c.ok || r.H != c.h {
			t.Errorf("New(%d, %d, %d) = %+v, %v; want steps +%d -%d", c.p0, c.p1, c.h, r, err, c.miss, c.ok)
		}
	}
}

func rule(t *testing.T) Rule {
	t.Helper()
	r, err := New(500, 2_500, 4_000)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// Three misses in a row reach 4,000 (2 x 1,609 = 3,218 does not); the
// alarm then holds while the sum falls below H and clears only at 0.
func TestAlarmRaisedAtHClearedOnlyAtZero(t *testing.T) {
	r := rule(t)
	var s State
	for k, want := range []State{{1_609, false}, {3_218, false}, {4_827, true}} {
		if s = r.Step(s, true); s != want {
			t.Fatalf("miss %d: %+v, want %+v", k+1, s, want)
		}
	}
	// 4,827 / 236 = 20.45: 20 oks leave 107, still alarmed; the 21st clears.
	for k := 1; k <= 20; k++ {
		if s = r.Step(s, false); !s.Alarmed || s.Sum != 4_827-236*k {
			t.Fatalf("ok %d: %+v, want alarmed at %d", k, s, 4_827-236*k)
		}
	}
	if s = r.Step(s, false); s != (State{}) {
		t.Fatalf("the ok that reaches 0: %+v, want cleared", s)
	}
	if s = r.Step(s, false); s != (State{}) {
		t.Fatalf("an ok at 0: %+v, want 0", s)
	}
}

// A miss from an alarmed state below H keeps the alarm; the sum never
// goes below 0 whatever the oks.
func TestNeverNegative(t *testing.T) {
	r := rule(t)
	s := State{Sum: 100, Alarmed: true}
	if s = r.Step(s, false); s != (State{}) {
		t.Fatalf("%+v, want floored at 0 and cleared", s)
	}
	s = State{Sum: 1_000, Alarmed: true}
	if s = r.Step(s, true); s != (State{Sum: 2_609, Alarmed: true}) {
		t.Fatalf("%+v: a miss below H dropped the alarm", s)
	}
}

// Over random outcome sequences and rules, Step matches a naive
// reference (the recurrence written out in floats, rounded as the
// simulator rounds) and keeps the invariant: 0 <= S <= 2H, alarmed iff S
// reached H since it was last 0.
func TestStepMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 500 {
		p0 := 1 + rng.IntN(9_998)
		p1 := p0 + 1 + rng.IntN(9_999-p0)
		h := 1 + rng.IntN(20_000)
		r, err := New(p0, p1, h)
		if err != nil {
			t.Fatal(err)
		}
		up := int(1000 * math.Log(float64(p1)/float64(p0)))
		down := int(1000 * math.Log(float64(10_000-p0)/float64(10_000-p1)))
		missBP := rng.IntN(10_000)
		var s State
		sum, alarmed := 0, false
		for k := range 300 {
			miss := rng.IntN(10_000) < missBP
			s = r.Step(s, miss)
			if miss {
				sum = min(sum+up, 2*h)
			} else {
				sum -= down
			}
			if sum < 0 {
				sum = 0
			}
			if sum >= h {
				alarmed = true
			}
			if sum == 0 {
				alarmed = false
			}
			if s.Sum != sum || s.Alarmed != alarmed || s.Sum < 0 || s.Sum > r.Ceiling() {
				t.Fatalf("p0 %d p1 %d h %d, outcome %d: %+v, reference %d %v", p0, p1, h, k, s, sum, alarmed)
			}
		}
	}
}

// After a long failure the sum stops at the ceiling, so a recovered
// executor leaves the suspect rate after 2H / OK oks, not after as many
// as it failed. Attack: an executor that failed for an hour (or was made
// to look so) would otherwise draw suspect-rate canaries for hours.
func TestCeilingBoundsTheRecovery(t *testing.T) {
	r, err := New(500, 2_500, 4_000)
	if err != nil {
		t.Fatal(err)
	}
	var s State
	for range 1_800 { // an hour of misses at one every 2 s
		s = r.Step(s, true)
	}
	if s.Sum != r.Ceiling() || !s.Alarmed {
		t.Fatalf("after an hour of misses %+v, want the ceiling %d, alarmed", s, r.Ceiling())
	}
	oks := 0
	for s.Sum > 0 {
		s = r.Step(s, false)
		oks++
	}
	if want := (r.Ceiling() + r.OK - 1) / r.OK; oks != want || s.Alarmed {
		t.Fatalf("%d oks to clear (alarmed %v), want %d", oks, s.Alarmed, want)
	}
}
