package sim

import (
	"fmt"
	"io"
	"strings"
)

// WriteTable prints every scenario's figures, one row per strategy.
func WriteTable(w io.Writer, results []Result) error {
	var b strings.Builder
	for _, r := range results {
		fmt.Fprintf(&b, "\n## %s: %s (%d epochs, %d faults, %d honest executor-epochs; simulated in %.1f s)\n\n",
			r.Scenario.Name, r.Scenario.About, r.Epochs, r.Figures[0].Episodes, r.Figures[0].HonestEpochs, r.Elapsed.Seconds())
		b.WriteString("| strategy | routed to faulty / fault | blocks to out | inferences to out | blocks from first client miss to out | never out | blocks to recovery | not back | honest epochs falsely out | of which on service | honest blocks out / epoch | probe latency (blocks) | max out | canaries / executor / block |\n")
		b.WriteString("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
		for _, f := range r.Figures {
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s | %s | %.2f%% | %.2f%% | %.1f | %s | %d%% | %.2f |\n",
				f.Strategy, faultFig(f, fmt.Sprintf("%.1f", f.RoutedBad)), faultFig(f, med(f.ToOutBlocks)),
				faultFig(f, med(f.ToOutInferences)), faultFig(f, med(f.FromMissBlocks)), faultFig(f, fmt.Sprint(f.NeverOut)),
				faultFig(f, med(f.RecoveryBlocks)), faultFig(f, fmt.Sprint(f.NotBack)),
				f.FalsePct, f.FalseServicePct, f.HonestOutBlocks, med(f.ProbeLatency), f.MaxOutPct, f.CanaryLoad)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func faultFig(f Figures, s string) string {
	if f.Episodes == 0 {
		return "-"
	}
	return s
}

func med(x int64) string {
	if x < 0 {
		return "-"
	}
	return fmt.Sprint(x)
}

// WriteGoals prints the goals with the figures of this run that
// decide them, as ratios measured side by side.
func WriteGoals(w io.Writer, c Config, results []Result) error {
	fig := func(scenario, strategy string) (Figures, bool) {
		for _, r := range results {
			for _, f := range r.Figures {
				if r.Scenario.Name == scenario && f.Strategy == strategy {
					return f, true
				}
			}
		}
		return Figures{}, false
	}
	var b strings.Builder
	b.WriteString("\n## Goals\n\n| goal | figure | met |\n|---|---|---|\n")
	row := func(goal, figure string, met bool) {
		fmt.Fprintf(&b, "| %s | %s | %s |\n", goal, figure, map[bool]string{true: "yes", false: "**no**"}[met])
	}
	if chain, ok := fig("dead", "chain"); ok {
		ratio := func(other string) float64 {
			o, _ := fig("dead", other)
			return o.RoutedBad / max(chain.RoutedBad, 1e-9)
		}
		row("requests routed to a dark executor: >= 10x fewer than the seed's design",
			fmt.Sprintf("%.1fx (%.1f vs %.1f per outage)", ratio("seed"), chain.RoutedBad, chain.RoutedBad*ratio("seed")), ratio("seed") >= 10)
		row("... and >= 50x fewer than the SPRT alone",
			fmt.Sprintf("%.1fx (%.1f vs %.1f per outage)", ratio("sprt"), chain.RoutedBad, chain.RoutedBad*ratio("sprt")), ratio("sprt") >= 50)
		row("dark executor out within 3 blocks (attested)", fmt.Sprintf("median %d blocks, %d of %d never out", chain.ToOutBlocks, chain.NeverOut, chain.Episodes),
			chain.ToOutBlocks >= 0 && chain.ToOutBlocks <= 3 && chain.NeverOut == 0)
	}
	for _, sc := range []string{"honest-3.25", "honest-5"} {
		if f, ok := fig(sc, "chain"); ok {
			row("false exclusions <= 1% of honest executor-epochs, "+sc, fmt.Sprintf("%.2f%% of %d", f.FalsePct, f.HonestEpochs), f.FalsePct <= 1)
		}
	}
	if f, ok := fig("rise", "chain"); ok {
		capPct := int(c.Params.HealthCbMaxExcludedWeightPct)
		row(fmt.Sprintf("network-wide rise: no exclusion beyond the cap (%d%%; equal weights: a share of executors)", capPct),
			fmt.Sprintf("at most %d%% of executors out at once; %.2f%% of executor-epochs out (the 1%% budget is for honest baselines)", f.MaxOutPct, f.FalsePct),
			f.MaxOutPct <= capPct)
	}
	for _, st := range []string{"chain-traffic", "chain"} {
		if f, ok := fig("degraded-28", st); ok {
			row("28%-miss executor out within 40 of its inferences ("+st+")",
				fmt.Sprintf("median %s, %d of %d never out", med(f.ToOutInferences), f.NeverOut, f.Episodes), f.ToOutInferences >= 0 && f.ToOutInferences <= 40 && f.NeverOut == 0)
		}
	}
	for _, st := range []string{"chain-traffic", "chain"} {
		if f, ok := fig("grief", st); ok {
			row("one griefing account never excludes the executor it targets ("+st+")",
				fmt.Sprintf("target out in %d of %d epochs", f.GriefedOut, f.Griefed), f.GriefedOut == 0)
		}
	}
	writeCanaryGoals(row, fig, c)
	slowest, slowestRun, name := 0.0, 0.0, ""
	for _, r := range results {
		slowest = max(slowest, r.Elapsed.Seconds()/float64(r.Epochs))
		if s := r.Elapsed.Seconds(); s > slowestRun {
			slowestRun, name = s, fmt.Sprintf("%s, %d epochs", r.Scenario.Name, r.Epochs)
		}
	}
	row(fmt.Sprintf("each scenario at full epoch length in under a minute on 2 cores (one epoch, all %d strategies)", len(Strategies)),
		fmt.Sprintf("slowest %.1f s per epoch; the longest run %.0f s (%s)", slowest, slowestRun, name), slowest < 60)
	_, err := io.WriteString(w, b.String())
	return err
}
