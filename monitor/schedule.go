package monitor

import (
	"container/heap"
	"time"
)

// target is one executor being watched: its latest verdict and its place
// in the schedule. member (its identity: address and URL, without Model
// and Suspect, which live in c) never changes once the target exists, so a
// probe or canary reads it without the lock; everything else is guarded by
// Monitor.mu.
type target struct {
	member Member
	// c is the canary side: outcomes, due time, model, suspicion.
	c canaryState
	// since is when the monitor began watching the executor: the age of a
	// verdict never made is counted from there.
	since time.Time
	// The latest verdict: set once a probe ended, ok its result, at when.
	set bool
	ok  bool
	at  time.Time

	// due is when the next probe may start; it is meaningful while the
	// target waits in the queue (pos >= 0).
	due      time.Time
	inFlight bool
	// retired marks a target that left the group: a probe still in flight
	// for it is for nobody.
	retired bool
	pos     int // index in the queue, -1 when not in it
}

// queue is a min-heap of targets by due time (container/heap).
type queue []*target

func (q queue) Len() int           { return len(q) }
func (q queue) Less(i, j int) bool { return q[i].due.Before(q[j].due) }
func (q queue) Swap(i, j int) {
	q[i], q[j] = q[j], q[i]
	q[i].pos, q[j].pos = i, j
}
func (q *queue) Push(x any) {
	t := x.(*target)
	t.pos = len(*q)
	*q = append(*q, t)
}
func (q *queue) Pop() any {
	old := *q
	t := old[len(old)-1]
	old[len(old)-1] = nil
	*q = old[:len(old)-1]
	t.pos = -1
	return t
}

// schedule decides which executor to probe next. It is pure (the caller
// passes the time in) and not safe for concurrent use: Monitor holds its
// lock around every call.
//
// Every executor has a due time; a probe for it may start at or after it,
// never while another is in flight for it, and the next one is due an
// interval after this one started (or when it ended, if it ran longer).
// So one validator probes an executor at most once per interval, however
// many slots are free, and a hanging executor delays only itself.
type schedule struct {
	interval time.Duration
	// salt rotates the start offsets, so that validators reading the same
	// group at the same block do not all probe the same executor at once.
	salt    uint64
	targets []*target // by member index
	waiting queue
	// canary schedules the canaries (canary_schedule.go).
	canary canaryPlan
}

// identity is what makes a target the same executor across group reads.
func identity(m Member) Member { return Member{Address: m.Address, URL: m.URL} }

// adopt makes members the watched group, at now. A target whose member
// (address and URL) is still in the group keeps its verdict, its canary
// outcomes, its due times and any probe or canary in flight, at its new
// index; a new member is due within the coming interval, at an offset
// spread evenly over it. A canary in flight for a member that left is
// cancelled. Then the canary side takes the members' models and
// suspicion (adoptCanaries). It reports whether anything changed.
func (s *schedule) adopt(members []Member, now time.Time) bool {
	if sameMembers(s.targets, members) {
		return s.adoptCanaries(members, now, false)
	}
	kept := make(map[Member]*target, len(s.targets))
	for _, t := range s.targets {
		t.retired = true
		kept[t.member] = t
	}
	next := make([]*target, len(members))
	for i, mem := range members {
		id := identity(mem)
		if t, ok := kept[id]; ok {
			delete(kept, id) // a duplicate member gets a target of its own
			t.retired = false
			next[i] = t
			continue
		}
		next[i] = &target{member: id, since: now, due: now.Add(s.offset(i, len(members))), pos: -1}
	}
	for _, t := range s.targets {
		if t.retired {
			t.c.abort() // left the group: its canary is no outcome
		}
	}
	s.targets = next
	s.waiting = s.waiting[:0]
	for _, t := range next {
		t.pos = -1
		if !t.inFlight {
			t.pos = len(s.waiting)
			s.waiting = append(s.waiting, t)
		}
	}
	heap.Init(&s.waiting)
	s.adoptCanaries(members, now, true)
	return true
}

func sameMembers(targets []*target, members []Member) bool {
	if len(targets) != len(members) {
		return false
	}
	for i, t := range targets {
		if t.member != identity(members[i]) {
			return false
		}
	}
	return true
}

// offset is member i's start offset in the first interval: the n members
// evenly spaced, rotated by the salt.
func (s *schedule) offset(i, n int) time.Duration {
	return spread(i, n, s.salt, s.interval)
}

// spread is member i's offset in a first interval: the n members evenly
// spaced over it, rotated by salt.
func spread(i, n int, salt uint64, interval time.Duration) time.Duration {
	slot := (uint64(i) + salt) % uint64(n)
	return time.Duration(int64(slot) * int64(interval) / int64(n))
}

// take returns the executor whose probe is most overdue, marked in flight,
// or nil and how long until the next one is due (0 if none is waiting).
func (s *schedule) take(now time.Time) (*target, time.Duration) {
	if len(s.waiting) == 0 {
		return nil, 0
	}
	if first := s.waiting[0]; first.due.After(now) {
		return nil, first.due.Sub(now)
	}
	t := heap.Pop(&s.waiting).(*target)
	t.inFlight = true
	return t, 0
}

// finish records the probe of t that started at start and ended at end,
// and queues t again. cancelled probes (the monitor stopping) leave the
// verdict as it was. It reports whether t is now the first due, so that
// a dispatcher waiting on a later time should look again.
func (s *schedule) finish(t *target, start, end time.Time, ok, cancelled bool) bool {
	t.inFlight = false
	if t.retired {
		return false
	}
	if !cancelled {
		t.set, t.ok, t.at = true, ok, end
	}
	t.due = start.Add(s.interval)
	if end.After(t.due) {
		t.due = end
	}
	heap.Push(&s.waiting, t)
	return t.pos == 0
}

// lag is how far behind the schedule is at now: how long the most overdue
// executor has been waiting for a slot (0 when none is overdue).
func (s *schedule) lag(now time.Time) time.Duration {
	if len(s.waiting) == 0 || !now.After(s.waiting[0].due) {
		return 0
	}
	return now.Sub(s.waiting[0].due)
}
