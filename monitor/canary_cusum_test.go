package monitor

import (
	"testing"
	"time"

	"github.com/inferenced/inferenced/monitor/cusum"
	"github.com/inferenced/inferenced/x/inference/service"
)

// beforeOutcome is an executor's canary state as its next outcome arrives (before
// it is recorded), with that outcome.
type beforeOutcome struct {
	sum    int
	report service.Report
	miss   bool
}

// watchOutcomes makes exec0's k-th canary (from 0) miss when miss(k), all
// others ok, and records exec0's state before each outcome; the report is
// read with min-samples minSamples.
func watchOutcomes(sim *canarySim, minSamples int, miss func(k int) bool) *[]beforeOutcome {
	var out []beforeOutcome
	tg := sim.s.targets[0]
	sim.ok = func(addr string, now time.Time) bool {
		if addr != tg.member.Address {
			return true
		}
		m := miss(len(out))
		out = append(out, beforeOutcome{tg.c.cusum.Sum, tg.c.report(now, sim.s.canary.ttl, minSamples), m})
		return !m
	}
	return &out
}

// newCusumSchedule is newCanarySchedule with another window.
func newCusumSchedule(n, window int) *schedule {
	s := newCanarySchedule(n, 0)
	s.canary.window = window
	return s
}

// A run of misses: the first comes at the background rate and moves the
// sum above 0, so the next canaries come at the suspect rate (no window
// burst); the report stays 0% through two misses (3,218 < 4,000) and is
// the window's failed share from the third (4,827), exactly when the sum
// reaches H; it stops at the ceiling, 2H. The healthy executor keeps its
// interval.
func TestCanaryCusumAlarmsWhenTheSumReachesH(t *testing.T) {
	s := newCanarySchedule(2, 0)
	sim := newCanarySim(t, s, 2)
	got := watchOutcomes(sim, 1, func(k int) bool { return k >= 2 })
	sim.run(t0.Add(2*cInterval + 8*cSuspect + time.Second))
	want := []beforeOutcome{{0, service.Unknown, false}, {0, 0, false}, {0, 0, true}, {1_609, 0, true}, {3_218, 0, true},
		{4_827, 75, true}, {6_436, 100, true}, {8_000, 100, true}}
	if len(*got) < len(want) {
		t.Fatalf("outcomes %v, want %v", *got, want)
	}
	for k, w := range want {
		if (*got)[k] != w {
			t.Fatalf("before outcome %d: %+v, want %+v (all %v)", k, (*got)[k], w, *got)
		}
	}
	gaps := sim.gaps("exec0", t0)
	if count(gaps[:2], cInterval) != 2 || count(gaps[2:], cSuspect) != len(gaps)-2 {
		t.Fatalf("gaps %v: want %s until the first miss, then %s", gaps, cInterval, cSuspect)
	}
	if !s.targets[0].c.suspect() || s.targets[1].c.suspect() {
		t.Fatal("suspect should be the failing executor only")
	}
	if g := sim.gaps("exec1", t0); count(g, cInterval) != len(g) {
		t.Fatalf("the healthy executor's gaps %v", g)
	}
}

// An executor missing at the baseline rate (5%: a pair and a single miss
// in every 60 canaries) is reported 0% throughout a day, every report
// known (the default window and min-samples), and costs a few
// suspect-rate canaries per miss, not a window's burst: about 1.6 times
// the background count. Random 5% misses would now and then put three
// close enough to alarm (about three times a day per validator and
// executor at a 60s interval); the peers' median absorbs those.
func TestCanaryCusumBaselineMissesReportZero(t *testing.T) {
	const day = 24 * time.Hour
	s := newCusumSchedule(1, 16)
	sim := newCanarySim(t, s, 1)
	got := watchOutcomes(sim, 8, func(k int) bool { return k%60 <= 1 || k%60 == 30 })
	sim.run(t0.Add(day))
	misses, cleared := 0, 0
	for k, o := range *got {
		if k >= 8 && o.report != 0 {
			t.Fatalf("before outcome %d (sum %d): report %s, want 0%%", k, o.sum, o.report)
		}
		if o.miss {
			misses++
		}
		if k > 0 && o.sum == 0 && (*got)[k-1].sum > 0 {
			cleared++
		}
	}
	background := int(day / cInterval)
	if n := len(*got); n < background || n > background*17/10 || misses < n/20 || cleared < misses/2 {
		t.Fatalf("%d canaries (%d misses, sum back at 0 %d times), want from %d to 1.7 times that", n, misses, cleared, background)
	}
}

// After an alarm (three misses), oks take the sum down by 236 each: the
// report stays the failed share (3 of 25 with a window of 32) while the
// sum is above 0, is 0% from the ok that brings it to 0 (the 21st), and
// the canaries are back at the background rate from then.
func TestCanaryCusumClearsAfterEnoughOks(t *testing.T) {
	s := newCusumSchedule(1, 32)
	sim := newCanarySim(t, s, 1)
	got := watchOutcomes(sim, 1, func(k int) bool { return k >= 2 && k <= 4 })
	sim.run(t0.Add(2*cInterval + 25*cSuspect + 4*cInterval))
	if len(*got) < 28 {
		t.Fatalf("%d outcomes", len(*got))
	}
	for k, o := range (*got)[5:27] {
		sum := max(4_827-236*k, 0)
		var report service.Report
		if sum > 0 {
			report = service.Rate(3, 5+k)
		}
		if o.sum != sum || o.report != report {
			t.Fatalf("after %d oks: sum %d, report %s; want %d, %s", k, o.sum, o.report, sum, report)
		}
	}
	if st := s.targets[0].c; st.cusum != (cusum.State{}) || st.suspect() {
		t.Fatalf("after the oks: %+v, suspect %v", st.cusum, st.suspect())
	}
	// Outcome 25 is the 21st ok: the canary after it is a background one.
	gaps := sim.gaps("exec0", t0)
	if count(gaps[:2], cInterval) != 2 || count(gaps[2:25], cSuspect) != 23 || count(gaps[25:], cInterval) != len(gaps)-25 {
		t.Fatalf("gaps %v: want 2 x %s, 23 x %s (the misses and the oks that clear the sum), then %s", gaps, cInterval, cSuspect, cInterval)
	}
}
