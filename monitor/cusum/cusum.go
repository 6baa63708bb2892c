// Package cusum is a one-sided CUSUM of pass/fail outcomes, in integer
// milli-nats: the log-likelihood ratio of a degraded miss rate p1 against
// a baseline p0, summed and floored at 0, with an alarm from a threshold
// H until the sum is back at 0. The monitor and the simulator share it so
// that the policy the simulator measured is the one validators run.
package cusum

import (
	"fmt"
	"math"
)

// Rule is a configured CUSUM: its two steps and its threshold.
type Rule struct {
	// Miss is added on a miss: ln(p1/p0) in milli-nats, rounded down.
	Miss int
	// OK is subtracted on an ok: ln((1-p0)/(1-p1)) in milli-nats, rounded
	// down.
	OK int
	// H is the alarm threshold in milli-nats.
	H int
}

// State is one stream's sum (milli-nats, never below 0) and alarm.
type State struct {
	Sum     int
	Alarmed bool
}

// New configures a rule from the baseline p0 and degraded p1 miss rates
// in basis points (0 < p0 < p1 < 10,000) and the threshold h in
// milli-nats (h > 0). The steps are rounded once here, as the simulator
// computes them, so every caller steps by the same integers.
func New(p0bp, p1bp, h int) (Rule, error) {
	switch {
	case p0bp < 1 || p1bp <= p0bp || p1bp > 9_999:
		return Rule{}, fmt.Errorf("cusum: rates %d and %d bp: want 1 <= p0 < p1 <= 9999", p0bp, p1bp)
	case h < 1:
		return Rule{}, fmt.Errorf("cusum: threshold %d milli-nats: want at least 1", h)
	}
	return Rule{
		Miss: int(1000 * math.Log(float64(p1bp)/float64(p0bp))),
		OK:   int(1000 * math.Log(float64(10_000-p0bp)/float64(10_000-p1bp))),
		H:    h,
	}, nil
}

// Ceiling is how high the sum goes: twice the threshold. Above H the sum
// only says how long the alarm outlives a recovery; uncapped, an hour of
// failures canaried every 2 s would keep an executor that recovered at
// the suspect rate for hours (about 12,000 oks at 5% / 25%), while at 2H
// it takes 2H / OK oks (34 at the defaults). Below H, where the alarm is
// decided, the ceiling changes nothing.
func (r Rule) Ceiling() int { return 2 * r.H }

// Step is s after one outcome: the sum moves by a step and stays within
// [0, Ceiling]; the alarm is raised when the sum reaches H and cleared
// only when it is back at 0, so a stream that alarmed stays alarmed until
// the evidence for degradation is spent, not merely below the threshold.
func (r Rule) Step(s State, miss bool) State {
	if miss {
		s.Sum = min(s.Sum+r.Miss, r.Ceiling())
	} else {
		s.Sum = max(s.Sum-r.OK, 0)
	}
	switch {
	case s.Sum >= r.H:
		s.Alarmed = true
	case s.Sum == 0:
		s.Alarmed = false
	}
	return s
}
