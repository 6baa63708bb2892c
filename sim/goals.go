package sim

import "fmt"

// writeCanaryGoals adds the service-attestation goals (issue 24, S1-S6)
// for the chain+canary strategy, beside today's chain where it compares.
func writeCanaryGoals(row func(goal, figure string, met bool), fig func(scenario, strategy string) (Figures, bool), c Config) {
	const st = "chain+canary"
	for _, g := range []struct {
		scenario string
		limit    int64
	}{{"degraded-28", 20}, {"degraded-28-1-agent", 20}, {"degraded-28-2-agents", 20}, {"degraded-40", 10}} {
		if f, ok := fig(g.scenario, st); ok {
			row(fmt.Sprintf("S1: %s out within %d blocks of its first client miss (%s)", g.scenario, g.limit, st),
				fmt.Sprintf("median %s blocks, %d of %d never out", med(f.FromMissBlocks), f.NeverOut, f.Episodes),
				f.FromMissBlocks >= 0 && f.FromMissBlocks <= g.limit && f.NeverOut == 0)
		}
	}
	for _, g := range []struct {
		scenario string
		limit    int64
	}{{"degraded-28-idle", 60}, {"degraded-40-idle", 30}, {"dead", 3}} {
		if f, ok := fig(g.scenario, st); ok {
			row(fmt.Sprintf("S1: %s out within %d blocks of the fault (%s)", g.scenario, g.limit, st),
				fmt.Sprintf("median %s blocks, %d of %d never out", med(f.ToOutBlocks), f.NeverOut, f.Episodes),
				f.ToOutBlocks >= 0 && f.ToOutBlocks <= g.limit && f.NeverOut == 0)
		}
	}
	for _, sc := range []string{"honest-3.25", "honest-5", "rise"} {
		if f, ok := fig(sc, st); ok {
			row("S2: honest executor-epochs falsely excluded on service <= 0.1%, "+sc,
				fmt.Sprintf("%.2f%% of %d (any evidence: %.2f%%)", f.FalseServicePct, f.HonestEpochs, f.FalsePct), f.FalseServicePct <= 0.1)
		}
	}
	if f, ok := fig("canary-aware", st); ok {
		// Today: the chain's traffic evidence against a 28% executor (42
		// inferences at gonka's shape), the bound.
		today, _ := fig("degraded-28", "chain")
		same, _ := fig("canary-aware", "chain")
		row("S5: an executor that serves canaries and fails 30% of clients is out on traffic as fast as today (median inferences, today: chain on degraded-28)",
			fmt.Sprintf("%s vs %s; chain on the same scenario %s (its SPRT also hears the misses the canaries contradict); %d of %d never out",
				med(f.ToOutInferences), med(today.ToOutInferences), med(same.ToOutInferences), f.NeverOut, f.Episodes),
			f.ToOutInferences >= 0 && (today.ToOutInferences < 0 || f.ToOutInferences <= today.ToOutInferences) && f.NeverOut == 0)
		row("S5: honest agents routing to it are never stopped", fmt.Sprintf("%d stopped", f.HonestStopped), f.HonestStopped == 0)
	}
	if f, ok := fig("honest-3.25", st); ok {
		organic := float64(c.RequestsPerBlock) / float64(c.Executors)
		// Each validator canaries every executor on its own schedule, so
		// the load is linear in the number of validators.
		per := f.CanaryLoad / float64(c.Validators)
		row(fmt.Sprintf("S6: canary load per executor, %d validators (organic: %.2f requests / executor / block)", c.Validators, organic),
			fmt.Sprintf("%.2f canaries / executor / block, %.1fx organic (honest-3.25); at 4 validators %.2f (%.1fx), at 150 %.1f (%.0fx)",
				f.CanaryLoad, f.CanaryLoad/organic, 4*per, 4*per/organic, 150*per, 150*per/organic), true)
	}
	row("S3: validators below 1/3 of the power cannot move the attested rate outside the honest range",
		fmt.Sprintf("by construction (service.Median; its property test); here %d of %d validators lie on service in every scenario", c.Byzantine, c.Validators), true)
	if f, ok := fig("collusion", st); ok {
		today, _ := fig("collusion", "chain")
		row("S4: two colluders with real traffic keep a canary-healthy executor out of others' routing <= 200 target-blocks / epoch, never INACTIVE",
			fmt.Sprintf("%.0f blocks a campaign, INACTIVE in %d of %d (chain: %.0f, INACTIVE in %d); %d honest agents stopped",
				f.GriefedOutBlocks, f.GriefedInactive, f.Griefed, today.GriefedOutBlocks, today.GriefedInactive, f.HonestStopped),
			f.GriefedOutBlocks <= 200 && f.GriefedInactive == 0 && f.HonestStopped == 0)
	}
}
