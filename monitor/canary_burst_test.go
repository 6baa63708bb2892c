package monitor

import (
	"slices"
	"testing"
	"time"

	"github.com/inferenced/inferenced/monitor/cusum"
)

// count is how many of gaps equal d.
func count(gaps []time.Duration, d time.Duration) int {
	n := 0
	for _, g := range gaps {
		if g == d {
			n++
		}
	}
	return n
}

// The chain marking an executor suspect starts one burst: the next
// canary-window canaries come at the suspect interval, then the
// background rate again although the chain still marks it (each group
// read sees the mark, none is a new trigger); only a new mark, after the
// chain cleared it, starts another burst. The other executors keep their
// interval throughout.
func TestCanaryBurstOnChainSuspicionIsBounded(t *testing.T) {
	s := newCanarySchedule(3, 0)
	sim := newCanarySim(t, s, 4)
	sim.run(t0.Add(2 * cInterval))
	ms := canaryMembers(3)
	ms[1].Suspect = true
	read := func(until time.Time) { // the group read once a second
		for sim.now.Before(until) {
			s.adopt(ms, sim.now)
			sim.run(sim.now.Add(time.Second))
		}
	}
	marked := sim.now
	read(marked.Add(4 * cInterval))
	gaps := sim.gaps("exec1", marked)
	// The first of the burst comes as soon as the rate allows (its gap
	// from the last background canary is shorter than an interval).
	if len(gaps) == 0 || gaps[0] >= cInterval || count(gaps[1:], cSuspect) != cWindow-1 {
		t.Fatalf("gaps after the mark %v: want %d canaries at %s, then %s", gaps, cWindow, cSuspect, cInterval)
	}
	if rest := gaps[cWindow:]; count(rest, cInterval) != len(rest) || len(rest) < 3 {
		t.Fatalf("after the burst, gaps %v: want the background interval", rest)
	}
	for _, addr := range []string{"exec0", "exec2"} {
		if g := sim.gaps(addr, t0); count(g, cInterval) != len(g) {
			t.Fatalf("%s, not suspect, canaried at gaps %v", addr, g)
		}
	}
	ms[1].Suspect = false
	read(sim.now.Add(cInterval))
	ms[1].Suspect = true
	again := sim.now
	read(again.Add(2 * cInterval))
	if g := sim.gaps("exec1", again); count(g, cSuspect) < cWindow-1 {
		t.Fatalf("a new mark did not start a new burst: %v", g)
	}
}

// A member the chain marks when it joins has its burst from its first
// canary, spread over the suspect interval.
func TestCanaryBurstForAMemberJoiningSuspect(t *testing.T) {
	ms := canaryMembers(2)
	ms[0].Suspect = true
	s := &schedule{interval: time.Second, canary: canaryPlan{enabled: true, interval: cInterval, suspect: cSuspect,
		window: cWindow, ttl: 10 * time.Minute, rule: cRule}}
	s.adopt(ms, t0)
	sim := newCanarySim(t, s, 2)
	sim.run(t0.Add(3 * cInterval))
	got := sim.starts["exec0"]
	if len(got) < cWindow+1 || got[0].After(t0.Add(cSuspect)) {
		t.Fatalf("suspect joiner's canaries at %v", got)
	}
	// The window's canaries, the first included, are the burst.
	if g := sim.gaps("exec0", t0); count(g[:cWindow-1], cSuspect) != cWindow-1 || g[cWindow-1] != cInterval {
		t.Fatalf("suspect joiner's gaps %v: want %d of %s then %s", g, cWindow-1, cSuspect, cInterval)
	}
}

// A group change keeps what is still true on the canary side: an executor
// whose address and URL are unchanged keeps its outcomes and canary in
// flight at its new index, takes its new model and mark; a new one starts
// with no outcome; a canary in flight for one that left is cancelled and
// is no outcome when it ends.
func TestCanaryScheduleKeepsRingsAcrossGroupChanges(t *testing.T) {
	s := newCanarySchedule(3, 0)
	a, b, c := s.targets[0], s.targets[1], s.targets[2]
	now := t0.Add(cInterval)
	for _, want := range []*target{a, b, c} {
		if got, _, _ := s.takeCanary(now); got != want {
			t.Fatal("canaries not taken in due order")
		}
	}
	s.finishCanary(a, now, now.Add(time.Second), false, false)
	var cancelled []string
	for _, tg := range []*target{b, c} {
		tg.c.cancel = func() { cancelled = append(cancelled, tg.member.Address) }
	}
	// a has a miss and waits; b and c are in flight.
	if s.adopt(canaryMembers(3), now) {
		t.Fatal("the same group counted as a change")
	}
	old := canaryMembers(3)
	moved := old[0]
	moved.Model, moved.Suspect = "other-model", true // same executor, new model and mark
	next := []Member{old[2], moved, {Address: "exec9", URL: "http://e9.example", Model: "m"}}
	if !s.adopt(next, now.Add(time.Second)) {
		t.Fatal("a new group not adopted")
	}
	if s.targets[0] != c || s.targets[1] != a || s.targets[2] == b || len(s.targets[2].c.ring.at) != 0 {
		t.Fatal("targets not kept at their new index")
	}
	if misses, total := a.c.ring.count(t0); misses != 1 || total != 1 || a.c.model != "other-model" || !a.c.chainSuspect {
		t.Fatalf("a lost its outcome or kept its old model/mark: %+v", a.c)
	}
	if !slices.Equal(cancelled, []string{"exec1"}) || !b.retired || !c.c.inFlight {
		t.Fatalf("cancelled %v: want only the leaver's canary", cancelled)
	}
	if s.finishCanary(b, now, now.Add(2*time.Second), false, true); len(b.c.ring.at) != 0 || b.c.pos != -1 {
		t.Error("the canary of an executor that left was recorded or queued")
	}
	s.finishCanary(c, now, now.Add(2*time.Second), true, false)
	if _, total := c.c.ring.count(t0); total != 1 || c.c.pos < 0 {
		t.Error("the canary of a kept executor was not recorded")
	}
	if len(s.canary.waiting) != 3 {
		t.Errorf("%d targets waiting for a canary, want 3", len(s.canary.waiting))
	}
}

// A cancelled canary (Stop) leaves the outcomes as they were.
func TestCanaryCancelledIsNoOutcome(t *testing.T) {
	s := newCanarySchedule(1, 0)
	tg, _, _ := s.takeCanary(t0)
	s.finishCanary(tg, t0, t0.Add(time.Second), true, false)
	tg, _, _ = s.takeCanary(t0.Add(cInterval))
	s.finishCanary(tg, t0.Add(cInterval), t0.Add(cInterval), false, true)
	if misses, total := tg.c.ring.count(t0); misses != 0 || total != 1 || tg.c.burst != 0 || tg.c.cusum != (cusum.State{}) {
		t.Fatalf("a cancelled canary changed the outcomes: %d of %d, burst %d, %+v", misses, total, tg.c.burst, tg.c.cusum)
	}
}
