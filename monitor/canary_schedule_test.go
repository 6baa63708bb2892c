package monitor

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/inferenced/inferenced/monitor/cusum"
	"github.com/inferenced/inferenced/x/inference/service"
)

const (
	cInterval = 30 * time.Second
	cSuspect  = 2 * time.Second
	cWindow   = 4
)

// cRule is the default CUSUM: 5% / 25%, alarm at 4,000 milli-nats (+1,609
// a miss, -236 an ok).
var cRule = must(DefaultConfig().cusumRule())

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func canaryMembers(n int) []Member {
	out := members(n)
	for i := range out {
		out[i].Model = "m"
	}
	return out
}

// newCanarySchedule watches n members with a model, canaries every 30s,
// every 2s in a burst of 4 or while the CUSUM is above 0, outcomes fresh
// for 10 minutes, no jitter.
func newCanarySchedule(n int, salt uint64) *schedule {
	s := &schedule{interval: time.Second, canary: canaryPlan{enabled: true, interval: cInterval, suspect: cSuspect,
		window: cWindow, ttl: 10 * time.Minute, rule: cRule, salt: salt}}
	s.adopt(canaryMembers(n), t0)
	return s
}

// canarySim runs a schedule's canaries on a fake clock, with slots slots,
// each canary taking latency and ending ok(member, now). At every event it
// checks that no executor has two canaries in flight and that no slot is
// free while a canary is overdue. starts holds each member's canary start
// times.
type canarySim struct {
	t       *testing.T
	s       *schedule
	slots   int
	latency time.Duration
	ok      func(addr string, now time.Time) bool
	now     time.Time
	running []struct {
		t          *target
		start, end time.Time
	}
	starts map[string][]time.Time
}

func newCanarySim(t *testing.T, s *schedule, slots int) *canarySim {
	return &canarySim{t: t, s: s, slots: slots, latency: 100 * time.Millisecond, now: t0, starts: map[string][]time.Time{},
		ok: func(string, time.Time) bool { return true }}
}

// run advances the clock to until.
func (c *canarySim) run(until time.Time) {
	c.t.Helper()
	for c.now.Before(until) {
		c.running = slices.DeleteFunc(c.running, func(r struct {
			t          *target
			start, end time.Time
		}) bool {
			if r.end.After(c.now) {
				return false
			}
			c.s.finishCanary(r.t, r.start, r.end, c.ok(r.t.member.Address, r.end), false)
			return true
		})
		for len(c.running) < c.slots {
			tg, model, _ := c.s.takeCanary(c.now)
			if tg == nil {
				break
			}
			if model == "" {
				c.t.Fatalf("a canary without a model for %s", tg.member.Address)
			}
			for _, r := range c.running {
				if r.t == tg {
					c.t.Fatalf("%s: a second canary for %s while one is in flight", c.now.Sub(t0), tg.member.Address)
				}
			}
			c.starts[tg.member.Address] = append(c.starts[tg.member.Address], c.now)
			c.running = append(c.running, struct {
				t          *target
				start, end time.Time
			}{tg, c.now, c.now.Add(c.latency)})
		}
		if len(c.running) < c.slots && c.s.canaryLag(c.now) > 0 {
			c.t.Fatalf("%s: a canary slot is free while a canary is overdue", c.now.Sub(t0))
		}
		next := until
		for _, r := range c.running {
			next = minTime(next, r.end)
		}
		if q := c.s.canary.waiting; len(q) > 0 && q[0].c.due.After(c.now) {
			next = minTime(next, q[0].c.due)
		}
		c.now = next
	}
}

// gaps are the times between consecutive starts of addr's canaries after from.
func (c *canarySim) gaps(addr string, from time.Time) []time.Duration {
	var out []time.Duration
	ts := c.starts[addr]
	for k := 1; k < len(ts); k++ {
		if !ts[k].Before(from) {
			out = append(out, ts[k].Sub(ts[k-1]))
		}
	}
	return out
}

// Outcomes count in a report while fresh (no older than the TTL), only
// the last window of them, only with at least min-samples of them; the
// rate rounds down; an executor without a model is unknown; while the
// CUSUM is not alarmed a known report is 0%.
func TestServiceReportsRateOverFreshOutcomes(t *testing.T) {
	const ttl, minSamples = 10 * time.Minute, 2
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	cases := []struct {
		name     string
		model    string
		outcomes []bool         // ok, oldest first, one a minute from t0
		now      time.Duration  // since t0
		want     service.Report // the report at now
	}{
		{"no outcome is unknown", "m", nil, 0, service.Unknown},
		{"fewer than min-samples is unknown", "m", []bool{false}, time.Minute, service.Unknown},
		{"one miss of two is 50%", "m", []bool{true, false}, 2 * time.Minute, 50},
		{"one miss of three rounds down to 33%", "m", []bool{true, true, false}, 3 * time.Minute, 33},
		{"all ok is 0%", "m", []bool{true, true, true, true}, 4 * time.Minute, 0},
		{"only the last window counts", "m", []bool{false, false, true, true, true, true}, 6 * time.Minute, 0},
		{"outcomes older than the TTL do not count", "m", []bool{false, false, true, true}, 12*time.Minute + time.Second, 0},
		{"too few fresh ones is unknown", "m", []bool{false, false, false, true}, 13*time.Minute + time.Second, service.Unknown},
		{"an outcome exactly TTL old still counts", "m", []bool{false, true}, 11 * time.Minute, 50},
		{"no model is unknown", "", []bool{false, false, false}, 3 * time.Minute, service.Unknown},
	}
	for _, c := range cases {
		st := canaryState{model: c.model, cusum: cusum.State{Sum: 4_000, Alarmed: true}}
		for k, ok := range c.outcomes {
			st.ring.add(cWindow, at(time.Duration(k+1)*time.Minute), ok)
		}
		if got := st.report(at(c.now), ttl, minSamples); got != c.want {
			t.Errorf("%s: %s, want %s", c.name, got, c.want)
		}
		// Not alarmed (whatever the sum): 0% where it was known.
		st.cusum = cusum.State{Sum: 3_999}
		want := c.want
		if want.Known() {
			want = 0
		}
		if got := st.report(at(c.now), ttl, minSamples); got != want {
			t.Errorf("%s, not alarmed: %s, want %s", c.name, got, want)
		}
	}
}

// Service answers only for the watched group, like Snapshot, and sets the
// known/unknown counts behind the gauges.
func TestServiceRefusals(t *testing.T) {
	cfg := testConfig()
	cfg.CanaryMinSamples = 4
	m, err := New(cfg, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Service(1, 0); err == nil {
		t.Error("a report before any group was read")
	}
	m.now = func() time.Time { return t0.Add(time.Minute) }
	m.sched.adopt(canaryMembers(3), t0)
	m.watching, m.epoch = true, 7
	for _, ok := range []bool{true, false, true, true} {
		m.sched.targets[0].c.ring.add(m.cfg.CanaryWindow, t0.Add(time.Second), ok)
	}
	m.sched.targets[0].c.cusum.Alarmed = true
	for _, bad := range [][2]int{{6, 3}, {8, 3}, {7, 2}, {7, 4}} {
		if _, err := m.Service(uint64(bad[0]), bad[1]); err == nil {
			t.Errorf("a report for epoch %d with %d members", bad[0], bad[1])
		}
	}
	got, known, err := m.service(7, 3)
	if err != nil || !slices.Equal(got, []service.Report{25, service.Unknown, service.Unknown}) || known != 1 {
		t.Fatalf("reports %v (%d known), %v", got, known, err)
	}
}

// Every executor with a model gets one canary per interval (exactly, with
// the jitter off), the first ones spread evenly over the first interval in
// an order rotated by the salt; with the monitor's jitter, each gap is
// within 25% of the interval and the gaps vary.
func TestCanaryScheduleSpreadsAndKeepsTheInterval(t *testing.T) {
	const n = 10
	for _, salt := range []uint64{0, 3, 1<<63 + 5} {
		s := newCanarySchedule(n, salt)
		sim := newCanarySim(t, s, 2)
		sim.run(t0.Add(10 * cInterval))
		for i := range n {
			addr := fmt.Sprintf("exec%d", i)
			first := t0.Add(time.Duration((uint64(i)+salt)%n) * cInterval / n)
			if got := sim.starts[addr]; len(got) != 10 || !got[0].Equal(first) {
				t.Fatalf("salt %d: %s canaried %d times, first at %v, want 10 from %v", salt, addr, len(got), got[0].Sub(t0), first.Sub(t0))
			}
			for _, g := range sim.gaps(addr, t0) {
				if g != cInterval {
					t.Fatalf("%s: canaries %s apart", addr, g)
				}
			}
		}
	}
	s := newCanarySchedule(n, 0)
	s.canary.jitter = jitter
	sim := newCanarySim(t, s, 2)
	sim.run(t0.Add(20 * cInterval))
	seen := map[time.Duration]bool{}
	for addr := range sim.starts {
		for _, g := range sim.gaps(addr, t0) {
			if g < cInterval*3/4 || g > cInterval*5/4 {
				t.Fatalf("%s: a jittered gap of %s", addr, g)
			}
			seen[g] = true
		}
	}
	if len(seen) < 10 {
		t.Errorf("only %d distinct gaps: a fixed phase", len(seen))
	}
}

// Members without a model get no canaries and are reported unknown; a
// member that is not canaried never blocks the others.
func TestCanaryScheduleSkipsMembersWithoutAModel(t *testing.T) {
	ms := canaryMembers(3)
	ms[1].Model = ""
	s := &schedule{interval: time.Second, canary: canaryPlan{enabled: true, interval: cInterval, suspect: cSuspect,
		window: cWindow, ttl: 10 * time.Minute, rule: cRule}}
	s.adopt(ms, t0)
	sim := newCanarySim(t, s, 1)
	sim.run(t0.Add(3 * cInterval))
	if len(sim.starts["exec1"]) != 0 || len(sim.starts["exec0"]) != 3 || len(sim.starts["exec2"]) != 3 {
		t.Fatalf("canaries %v", sim.starts)
	}
	off := &schedule{interval: time.Second, canary: canaryPlan{interval: cInterval, suspect: cSuspect, window: cWindow}}
	off.adopt(canaryMembers(3), t0)
	if tg, _, _ := off.takeCanary(t0.Add(time.Hour)); tg != nil {
		t.Fatal("a canary with canaries off")
	}
}

// A canary that fails while the executor's health probe fails is no
// outcome (the liveness attestation reports the dark spell; kept in the
// service window it would exclude the executor again once it is back); a
// canary it serves still counts, and failures count again once its health
// probe passes.
func TestFailedCanaryOfADarkExecutorIsNoOutcome(t *testing.T) {
	s := newCanarySchedule(1, 1)
	tg := s.targets[0]
	tg.set, tg.ok = true, false // the last health probe failed
	at := t0.Add(time.Second)
	s.finishCanary(tg, at, at, false, false)
	if _, total := tg.c.ring.count(t0); total != 0 || tg.c.cusum.Sum != 0 {
		t.Fatalf("a failed canary of a dark executor was recorded (%d outcomes, sum %d)", total, tg.c.cusum.Sum)
	}
	s.finishCanary(tg, at, at, true, false)
	tg.ok = true // its health probe passes again
	s.finishCanary(tg, at, at, false, false)
	if misses, total := tg.c.ring.count(t0); total != 2 || misses != 1 || tg.c.cusum.Sum != cRule.Miss {
		t.Fatalf("outcomes %d misses of %d, sum %d: want 1 of 2, %d", misses, total, tg.c.cusum.Sum, cRule.Miss)
	}
}

// An executor whose latest health probe failed is not canaried while it
// stays dark (its burst waits); the others keep their schedule, and once
// its probe passes it is canaried again, at the suspect rate while the
// burst it was owed lasts. Attack: a monitor starved of CPU sees healthy
// executors dark; bursting at them would add the load that darkened them.
func TestDarkExecutorIsNotCanaried(t *testing.T) {
	s := newCanarySchedule(3, 1)
	dark := s.targets[1]
	dark.set, dark.ok = true, false
	s.canary.trigger(&dark.c, t0)
	sim := newCanarySim(t, s, 4)
	sim.run(t0.Add(2 * time.Minute))
	if got := len(sim.starts[dark.member.Address]); got != 0 {
		t.Fatalf("%d canaries sent to a dark executor", got)
	}
	for _, i := range []int{0, 2} {
		if got := len(sim.starts[s.targets[i].member.Address]); got < 3 {
			t.Fatalf("member %d: %d canaries in 2 minutes at one every 30s", i, got)
		}
	}
	if dark.c.burst != cWindow {
		t.Fatalf("burst %d left, want the %d it was owed", dark.c.burst, cWindow)
	}
	dark.ok = true // its health probe passes again
	back := sim.now
	sim.run(back.Add(time.Duration(cWindow) * cSuspect))
	starts := sim.starts[dark.member.Address]
	if len(starts) != cWindow || starts[0].Sub(back) > cSuspect {
		t.Fatalf("canaries at %v after it came back at %v, want its burst of %d, the first within %s", starts, back, cWindow, cSuspect)
	}
	for _, gap := range sim.gaps(dark.member.Address, back) {
		if gap != cSuspect {
			t.Fatalf("burst gaps %v, want %s", sim.gaps(dark.member.Address, back), cSuspect)
		}
	}
}
