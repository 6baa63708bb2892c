package sim

import (
	"fmt"
	"io"

	"github.com/inferenced/inferenced/x/inference/breaker"
)

// SweepRules are the traffic trip rules the calibration compares: the
// configured one first, the one used before the calibration, then windows
// of 20 to 64 with the smallest miss
// counts that could keep honest executors in. Counted misses mostly come in
// pairs (two agents' misses corroborate each other), so k misses need about
// k/2 pairs.
func SweepRules(c Config) []breaker.TripRule {
	rules := []breaker.TripRule{
		c.Params.BreakerParams().Rules[breaker.Traffic],
		// The rule both kinds shared before the calibration.
		{WindowSamples: 16, MinSamples: 4, ThresholdPct: 25, ConsecutiveMisses: 3},
	}
	for _, wk := range [][2]uint32{{20, 7}, {24, 5}, {24, 6}, {32, 5}, {32, 7}, {40, 9}, {64, 11}} {
		w, k := wk[0], wk[1]
		// The threshold that trips at k misses of w and not at k-1:
		// misses*100 > pct*w.
		pct := (100*(k-1))/w + 1
		rules = append(rules, breaker.TripRule{WindowSamples: w, MinSamples: w / 2, ThresholdPct: pct, ConsecutiveMisses: 8})
	}
	return rules
}

// SweepRow is one candidate traffic rule's figures.
type SweepRow struct {
	Rule                      breaker.TripRule
	False325, False5, False10 float64
	Degraded28, Degraded40    int64 // median inferences to out
	DeadTrafficBlocks         int64 // median blocks to out, traffic only
}

// Sweep runs the calibration scenarios under the chain's traffic-only
// strategy with each rule in place of the configured traffic rule.
func Sweep(c Config, rules []breaker.TripRule) ([]SweepRow, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	names := []string{"honest-3.25", "honest-5", "honest-10", "degraded-28", "degraded-40", "dead"}
	rows := make([]SweepRow, len(rules))
	figs := make([][]Figures, len(rules))
	for i := range figs {
		figs[i] = make([]Figures, len(names))
	}
	err := parallel(len(rules)*len(names), func(j int) error {
		var err error
		figs[j/len(names)][j%len(names)], err = sweepOne(c, rules[j/len(names)], scenario(names[j%len(names)]))
		return err
	})
	if err != nil {
		return nil, err
	}
	for i, r := range rules {
		f := figs[i]
		rows[i] = SweepRow{Rule: r, False325: f[0].FalsePct, False5: f[1].FalsePct, False10: f[2].FalsePct,
			Degraded28: f[3].ToOutInferences, Degraded40: f[4].ToOutInferences, DeadTrafficBlocks: f[5].ToOutBlocks}
	}
	return rows, nil
}

func scenario(name string) Scenario {
	for _, sc := range Scenarios() {
		if sc.Name == name {
			return sc
		}
	}
	return Scenario{}
}

func sweepOne(c Config, r breaker.TripRule, sc Scenario) (Figures, error) {
	s, err := newChain("chain-traffic", c, false)
	if err != nil {
		return Figures{}, err
	}
	s.p.Breaker.Rules[breaker.Traffic] = r
	s.p.Evidence.Window = r.WindowSamples
	m, err := newWorld(c, sc, s).run()
	if err != nil {
		return Figures{}, fmt.Errorf("%s: %w", sc.Name, err)
	}
	return m.figures(sc.Name, s.name), nil
}

// WriteSweep prints the calibration table.
func WriteSweep(w io.Writer, rows []SweepRow) error {
	if _, err := fmt.Fprintln(w, "| traffic rule (window / min / threshold / in a row) | trips at | false 3.25% | false 5% | false 10% | 28%: inferences to out | 40%: inferences to out | dead, traffic only: blocks to out |\n|---|---|---|---|---|---|---|---|"); err != nil {
		return err
	}
	for i, r := range rows {
		k := r.Rule.ThresholdPct*r.Rule.WindowSamples/100 + 1
		mark := ""
		if i == 0 {
			mark = " (configured)"
		}
		if _, err := fmt.Fprintf(w, "| %d / %d / %d%% / %d%s | %d of %d | %.1f%% | %.1f%% | %.1f%% | %s | %s | %s |\n",
			r.Rule.WindowSamples, r.Rule.MinSamples, r.Rule.ThresholdPct, r.Rule.ConsecutiveMisses, mark, k, r.Rule.WindowSamples,
			r.False325, r.False5, r.False10, med(r.Degraded28), med(r.Degraded40), med(r.DeadTrafficBlocks)); err != nil {
			return err
		}
	}
	return nil
}
