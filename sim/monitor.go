package sim

import (
	"fmt"

	"github.com/inferenced/inferenced/x/inference/aggregate"
	"github.com/inferenced/inferenced/x/inference/verdict"
)

// vote is what the validators' vote extensions of block h say, aggregated
// by the chain's own code: each validator's monitor reports every
// executor's health endpoint as of MonitorLag blocks before, as a packed
// list (aggregate takes either compact form; the extension's own encoding
// is the wire's concern, not the model's). Validators 0..Byzantine-1 lie, the next Flaky
// err now and then, the rest are honest; all have equal power.
func (w *world) vote(h int64) (Votes, error) {
	attested, err := w.liveness(h)
	if err != nil {
		return Votes{}, err
	}
	out := Votes{Attested: attested}
	if s, ok := w.strategy.(canaryReader); ok && s.ReadsCanaries() {
		if out.Service, err = w.canaries.vote(w, h, s); err != nil {
			return Votes{}, fmt.Errorf("service: %w", err)
		}
	}
	return out, nil
}

// liveness is the validators' majority on each executor's health endpoint.
func (w *world) liveness(h int64) ([]aggregate.Sample, error) {
	n := w.c.Executors
	seen := h - int64(w.c.MonitorLag)
	votes := make([]aggregate.Vote, w.c.Validators)
	verdicts := make([]verdict.Verdict, n)
	for v := range votes {
		for e := 0; e < n; e++ {
			verdicts[e] = w.observe(v, e, seen)
		}
		packed, err := verdict.Pack(verdicts)
		if err != nil {
			return nil, err
		}
		votes[v] = aggregate.Vote{Power: 1, Verdicts: packed}
	}
	return aggregate.Aggregate(votes, n)
}

// observe is validator v's verdict on executor e as of height h.
func (w *world) observe(v, e int, h int64) verdict.Verdict {
	down := w.plan.down(e, h)
	truth := verdict.OK
	if down {
		truth = verdict.Miss
	}
	switch {
	case v < w.c.Byzantine:
		if down {
			return verdict.OK
		}
		return verdict.Miss
	case v < w.c.Byzantine+w.c.Flaky:
		if w.monitors.IntN(100) >= w.c.FlakyPct {
			return truth
		}
		if w.monitors.IntN(2) == 0 {
			return verdict.Unknown
		}
		return verdict.Miss
	}
	return truth
}
