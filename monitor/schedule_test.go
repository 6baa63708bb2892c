package monitor

import (
	"fmt"
	"slices"
	"testing"
	"time"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func members(n int) []Member {
	out := make([]Member, n)
	for i := range out {
		out[i] = Member{Address: fmt.Sprintf("exec%d", i), URL: fmt.Sprintf("http://e%d.example", i)}
	}
	return out
}

// simulate runs the schedule on a fake clock from t0 for horizon with a
// number of slots, each probe taking latency(member), and returns each
// member's probe start times. It checks the dispatcher's invariants at
// every event: never two probes in flight for one executor, and never a
// free slot while an executor is overdue (a slot is reused the moment its
// probe ends).
func simulate(t *testing.T, s *schedule, slots int, latency func(Member) time.Duration, horizon time.Duration) map[string][]time.Time {
	t.Helper()
	type probe struct {
		t          *target
		start, end time.Time
	}
	starts := map[string][]time.Time{}
	var running []probe
	for now := t0; now.Before(t0.Add(horizon)); {
		running = slices.DeleteFunc(running, func(p probe) bool {
			if p.end.After(now) {
				return false
			}
			s.finish(p.t, p.start, p.end, true, false)
			return true
		})
		for len(running) < slots {
			tg, _ := s.take(now)
			if tg == nil {
				break
			}
			for _, p := range running {
				if p.t == tg {
					t.Fatalf("%s: a second probe for %s while one is in flight", now.Sub(t0), tg.member.Address)
				}
			}
			starts[tg.member.Address] = append(starts[tg.member.Address], now)
			running = append(running, probe{tg, now, now.Add(latency(tg.member))})
		}
		if len(running) < slots && s.lag(now) > 0 {
			t.Fatalf("%s: a slot is free while an executor is overdue", now.Sub(t0))
		}
		next := t0.Add(horizon)
		for _, p := range running {
			next = minTime(next, p.end)
		}
		if len(s.waiting) > 0 && s.waiting[0].due.After(now) {
			next = minTime(next, s.waiting[0].due) // an overdue one waits for a slot to end
		}
		now = next
	}
	return starts
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

func newSchedule(n int, interval time.Duration, salt uint64) *schedule {
	s := &schedule{interval: interval, salt: salt}
	s.adopt(members(n), t0)
	return s
}

func constant(d time.Duration) func(Member) time.Duration {
	return func(Member) time.Duration { return d }
}

// Every executor is probed exactly once per interval, whatever the number
// of slots, as long as the slots cover the group; consecutive probes of
// one executor start an interval apart.
func TestScheduleProbesEachExecutorOncePerInterval(t *testing.T) {
	const interval = 100 * time.Millisecond
	cases := []struct {
		name    string
		n       int
		slots   int
		latency time.Duration
	}{
		{"one executor", 1, 1, time.Millisecond},
		{"more executors than slots", 50, 4, 5 * time.Millisecond},
		{"one slot, back to back", 10, 1, 9 * time.Millisecond},
		{"latency of a whole interval's share", 1000, 32, 3 * time.Millisecond},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			starts := simulate(t, newSchedule(c.n, interval, 7), c.slots, constant(c.latency), 10*interval)
			if len(starts) != c.n {
				t.Fatalf("%d executors probed, want %d", len(starts), c.n)
			}
			for addr, ts := range starts {
				if len(ts) != 10 {
					t.Fatalf("%s probed %d times in 10 intervals", addr, len(ts))
				}
				for k := 1; k < len(ts); k++ {
					if gap := ts[k].Sub(ts[k-1]); gap < interval {
						t.Fatalf("%s probed twice within %s", addr, gap)
					}
				}
			}
		})
	}
}

// A hanging executor holds one slot for the timeout and is probed again
// when its probe ends; the others keep their interval exactly.
func TestScheduleHangingExecutorsDelayNoOne(t *testing.T) {
	const interval, timeout = 100 * time.Millisecond, 300 * time.Millisecond
	hanging := map[string]bool{}
	for i := 0; i < 40; i += 4 {
		hanging[fmt.Sprintf("exec%d", i)] = true // a quarter of the group, 10 slots of 20 held for good
	}
	hangs := func(m Member) bool { return hanging[m.Address] }
	latency := func(m Member) time.Duration {
		if hangs(m) {
			return timeout
		}
		return 2 * time.Millisecond
	}
	starts := simulate(t, newSchedule(40, interval, 3), 20, latency, 3*time.Second)
	for addr, ts := range starts {
		want := interval
		if hangs(Member{Address: addr}) {
			want = timeout // due again when its probe ended
		}
		for k := 1; k < len(ts); k++ {
			if gap := ts[k].Sub(ts[k-1]); gap != want {
				t.Fatalf("%s: probes %s apart, want %s", addr, gap, want)
			}
		}
	}
}

// The first probes are spread evenly over the first interval, in an order
// rotated by the salt, so executors are not probed in a burst and two
// validators do not probe the same executor at once.
func TestScheduleSpreadsStartTimes(t *testing.T) {
	const n, interval = 10, 100 * time.Millisecond
	for _, salt := range []uint64{0, 3, 1<<63 + 5} {
		s := newSchedule(n, interval, salt)
		starts := simulate(t, s, n, constant(time.Millisecond), interval)
		for i := range n {
			want := t0.Add(time.Duration((uint64(i)+salt)%n) * interval / n)
			if got := starts[fmt.Sprintf("exec%d", i)]; len(got) != 1 || !got[0].Equal(want) {
				t.Errorf("salt %d: exec%d started at %v, want %v", salt, i, got, want.Sub(t0))
			}
		}
	}
}

// A group change keeps what is still true: an executor whose address and
// URL are unchanged keeps its verdict, due time and probe in flight, at its
// new index; a new one starts unknown; a probe in flight for one that left
// is dropped when it ends.
func TestScheduleAdoptsGroupChanges(t *testing.T) {
	const interval = 100 * time.Millisecond
	s := newSchedule(3, interval, 0)
	a, b, c := s.targets[0], s.targets[1], s.targets[2]
	at := t0.Add(interval)
	for _, want := range []*target{a, b, c} { // most overdue first
		if got, _ := s.take(at); got != want {
			t.Fatal("targets not taken in due order")
		}
	}
	s.finish(a, at, at.Add(time.Millisecond), true, false)
	// a has a verdict and waits; b and c are in flight.
	if s.adopt(members(3), t0.Add(interval)) {
		t.Fatal("the same group counted as a change")
	}
	moved := members(3)
	next := []Member{moved[2], {Address: "exec9", URL: "http://e9.example"}, moved[0], moved[0]}
	now := t0.Add(2 * interval)
	if !s.adopt(next, now) {
		t.Fatal("a new group not adopted")
	}
	cases := []struct {
		name string
		got  *target
		want *target // nil: a new target
	}{
		{"c moved to index 0", s.targets[0], c},
		{"a new member", s.targets[1], nil},
		{"a moved to index 2", s.targets[2], a},
		{"a duplicate gets its own target", s.targets[3], nil},
	}
	for _, tc := range cases {
		if tc.want != nil && tc.got != tc.want || tc.want == nil && (tc.got == a || tc.got == b || tc.got == c || tc.got.set) {
			t.Errorf("%s: wrong target", tc.name)
		}
	}
	if !a.set || !a.ok || !c.inFlight || !b.retired || a.retired || c.retired {
		t.Fatalf("kept state lost: a=%+v b retired=%v c=%+v", a, b.retired, c)
	}
	if s.finish(b, t0, now, false, false); b.set || b.pos != -1 {
		t.Error("the probe of an executor that left was recorded")
	}
	s.finish(c, t0.Add(interval), now, false, false)
	if !c.set || c.ok || c.pos < 0 {
		t.Error("the probe of a kept executor was not recorded")
	}
	if len(s.waiting) != 4 {
		t.Errorf("%d targets waiting, want 4", len(s.waiting))
	}
}

// A cancelled probe (the monitor stopping) leaves the verdict as it was.
func TestScheduleCancelledProbeKeepsVerdict(t *testing.T) {
	s := newSchedule(1, 100*time.Millisecond, 0)
	tg, _ := s.take(t0)
	s.finish(tg, t0, t0.Add(time.Millisecond), true, false)
	tg, _ = s.take(t0.Add(time.Second))
	s.finish(tg, t0.Add(time.Second), t0.Add(time.Second), false, true)
	if !tg.ok || !tg.at.Equal(t0.Add(time.Millisecond)) {
		t.Fatalf("a cancelled probe changed the verdict: %+v", tg)
	}
}
