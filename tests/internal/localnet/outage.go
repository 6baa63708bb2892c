package localnet

import (
	"fmt"
	"strings"
	"time"
)

// Outage is one outage of fake executor j, driven step by step, and the
// heights it went through. Each step does exactly what its comment says,
// and no more, so a scenario keeps its own timing by choosing its steps:
//
//	o := n.Outage(1).DarkAndBack(1) // the common case
//	o := n.Outage(1).Refuse().AwaitExclusion(0, 3*time.Minute).Up().AwaitRecovery(3*time.Minute)
//
// A step that waits fails the test at its timeout, saying what it awaited
// and the executor's last state and participant record.
type Outage struct {
	n    *Net
	J    int
	Addr string // executor j's address

	DarkAt     int64  // the last block committed before the fault began
	ExcludedAt int64  // the block of the exclusion awaited
	Cooldown   int64  // its cooldown, in blocks
	Kind       string // its evidence (Attested, Traffic): set by Evidence
	UpAt       int64  // node 0's height just after Up
	HealthyAt  int64  // the block that restored it
	RestoredBy string // the reason it gave (ProbeSucceeded, AttestedOK)
	SawProbe   bool   // promoted to PROBE in (ExcludedAt, HealthyAt]: set by ProbeSeen

	// Exclusion and Recovery are the readings that ended the waits; Probe
	// is the first PROBE reading seen while awaiting recovery (zero if the
	// executor was promoted and restored between two polls).
	Exclusion, Probe, Recovery HealthJSON

	k       int // the exclusion awaited, counted in the epoch (0: any)
	watcher *othersWatcher
}

// Outage begins an outage of fake executor j (nothing is switched yet).
func (n *Net) Outage(j int) *Outage {
	n.t.Helper()
	return &Outage{n: n, J: j, Addr: n.ExecutorAddr(j)}
}

// DarkAndBack is the whole outage most scenarios need: Dark, the k-th
// exclusion of the epoch (2 minutes), its Evidence, Up, the recovery (3
// minutes), then ProbeSeen.
func (o *Outage) DarkAndBack(k int) *Outage {
	o.n.t.Helper()
	return o.Dark().AwaitExclusion(k, 2*time.Minute).Evidence().Up().AwaitRecovery(3 * time.Minute).ProbeSeen()
}

// Dark switches the executor off right after a block is committed
// (Net.GoDark): DarkAt is that block, and the outage begins during
// DarkAt+1.
func (o *Outage) Dark() *Outage {
	o.n.t.Helper()
	o.DarkAt = o.n.GoDark(o.J)
	return o
}

// Refuse switches the executor off at once, wherever the chain is in its
// block: DarkAt is node 0's height read just before.
func (o *Outage) Refuse() *Outage {
	o.n.t.Helper()
	o.DarkAt = o.n.Height()
	o.n.Refuse(o.J)
	return o
}

// Fail makes the executor fail pct% of its inferences at once (its health
// endpoint still answers; 0 ends it). The first fault of the outage sets
// DarkAt to node 0's height read just before it.
func (o *Outage) Fail(pct int) *Outage {
	o.n.t.Helper()
	if o.DarkAt == 0 {
		o.DarkAt = o.n.Height()
	}
	o.n.Fail(o.J, pct)
	return o
}

// AwaitExclusion waits up to timeout until node 0 holds the executor
// EXCLUDED, for the k-th time in the epoch if k > 0, and records
// ExcludedAt, Cooldown and Exclusion.
func (o *Outage) AwaitExclusion(k int, timeout time.Duration) *Outage {
	o.n.t.Helper()
	o.k = k
	h := o.await("exclusion", timeout, func(h HealthJSON) bool {
		return h.State == Excluded && (k == 0 || h.Exclusions == k)
	}, nil)
	o.Exclusion, o.ExcludedAt, o.Cooldown = h, Atoi(o.n.t, h.ExcludedAt), Atoi(o.n.t, h.CooldownBlocks)
	return o
}

// Evidence reads the kind of evidence of the exclusion from its transition
// event into Kind.
func (o *Outage) Evidence() *Outage {
	o.n.t.Helper()
	o.Kind = o.n.TransitionEvent(o.ExcludedAt, o.Addr)["kind"]
	return o
}

// Up makes the executor answer again; UpAt is node 0's height just after.
func (o *Outage) Up() *Outage {
	o.n.t.Helper()
	o.n.Up(o.J)
	o.UpAt = o.n.Height()
	return o
}

// AwaitRecovery waits up to timeout until node 0 holds the executor
// HEALTHY again after ExcludedAt, and records HealthyAt, RestoredBy,
// Recovery and the first PROBE reading seen on the way.
func (o *Outage) AwaitRecovery(timeout time.Duration) *Outage {
	o.n.t.Helper()
	h := o.await("recovery", timeout, func(h HealthJSON) bool {
		return h.State == Healthy && Atoi(o.n.t, h.SinceHeight) > o.ExcludedAt
	}, func(h HealthJSON) {
		if h.State == Probe && o.Probe.State == "" {
			o.Probe = h
		}
	})
	o.Recovery, o.HealthyAt, o.RestoredBy = h, Atoi(o.n.t, h.SinceHeight), h.Reason
	return o
}

// ProbeSeen reads the transition events of (ExcludedAt, HealthyAt] and
// sets SawProbe if one promoted the executor to PROBE.
func (o *Outage) ProbeSeen() *Outage {
	o.n.t.Helper()
	o.SawProbe = SawProbe(o.n, o.Addr, o.ExcludedAt, o.HealthyAt)
	return o
}

func (o *Outage) await(what string, timeout time.Duration, ok func(HealthJSON) bool, seen func(HealthJSON)) HealthJSON {
	o.n.t.Helper()
	if o.k > 0 {
		what = fmt.Sprintf("%s %d", what, o.k)
	}
	h, found := o.n.pollHealth(o.Addr, timeout, ok, seen)
	if !found {
		if p, err := o.n.participant(o.Addr); err == nil {
			o.n.t.Logf("participant: %+v", p)
		}
		o.n.t.Fatalf("exec%d's %s: not within %s; last state %+v", o.J, what, timeout, h)
	}
	return h
}

// WatchOthers polls node 0's excluded executors every 150 ms from now until
// Others is called (or the test ends), noting every executor but this one
// that it finds out.
func (o *Outage) WatchOthers() *Outage {
	w := &othersWatcher{stop: make(chan struct{}), done: make(chan string)}
	go func() {
		seen := ""
		for {
			select {
			case <-w.stop:
				w.done <- seen
				return
			case <-time.After(150 * time.Millisecond):
			}
			out, err := o.n.Excluded(0)
			if err != nil {
				continue
			}
			for _, h := range out {
				if h.Address != o.Addr && !strings.Contains(seen, h.Address) {
					seen += h.Address + " "
				}
			}
		}
	}()
	o.watcher = w
	o.n.t.Cleanup(func() { o.Others() })
	return o
}

// Others stops WatchOthers and returns the other executors it found out,
// each followed by a space ("" if none).
func (o *Outage) Others() string {
	w := o.watcher
	if w == nil {
		return ""
	}
	if !w.stopped {
		close(w.stop)
		w.seen, w.stopped = <-w.done, true
	}
	return w.seen
}

type othersWatcher struct {
	stop    chan struct{}
	done    chan string
	seen    string
	stopped bool
}
