// Command sim runs the outage simulator (package sim) and prints its table;
// with -out it also writes the table and the plot there (make sim writes
// docs/simulation/).
package main

import (
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/inferenced/inferenced/sim"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "sim:", err)
		os.Exit(1)
	}
}

func run() error {
	c := sim.DefaultConfig()
	flag.Uint64Var(&c.Seed, "seed", c.Seed, "random seed (same seed, same figures)")
	flag.IntVar(&c.Executors, "executors", c.Executors, "executors in the epoch group")
	flag.StringVar(&c.Weights, "weights", c.Weights, "executor weights: equal or skewed")
	flag.IntVar(&c.Validators, "validators", c.Validators, "validators (1..150)")
	flag.IntVar(&c.Flaky, "flaky", c.Flaky, "validators whose monitor errs now and then")
	flag.IntVar(&c.Byzantine, "byzantine", c.Byzantine, "validators whose monitor lies (fewer than a third)")
	flag.IntVar(&c.FlakyPct, "flaky-pct", c.FlakyPct, "how often a flaky monitor errs, percent")
	flag.IntVar(&c.MonitorLag, "monitor-lag", c.MonitorLag, "blocks a monitor's verdict lags the truth")
	flag.IntVar(&c.Agents, "agents", c.Agents, "honest transfer agents")
	flag.IntVar(&c.RequestsPerBlock, "requests", c.RequestsPerBlock, "client requests per block")
	flag.Int64Var(&c.EpochLength, "epoch", c.EpochLength, "epoch length in blocks")
	flag.IntVar(&c.Epochs, "epochs", c.Epochs, "epochs per fault scenario (the degraded ones run 5)")
	flag.IntVar(&c.HonestEpochs, "honest-epochs", c.HonestEpochs, "epochs per honest baseline scenario")
	flag.Int64Var(&c.ExpirationBlocks, "expiration", c.ExpirationBlocks, "blocks before an unfinished request is a miss")
	flag.IntVar(&c.Targets, "targets", c.Targets, "executors a fault scenario hits per epoch")
	flag.Int64Var(&c.Canary.Every, "canary-every", c.Canary.Every, "blocks between a validator's canaries of an executor (background)")
	flag.Int64Var(&c.Canary.SuspectEvery, "canary-suspect-every", c.Canary.SuspectEvery, "blocks between canaries of a suspect executor")
	flag.IntVar(&c.Canary.Window, "canary-window", c.Canary.Window, "canaries per executor a validator's report spans")
	flag.IntVar(&c.Canary.MinSamples, "canary-min-samples", c.Canary.MinSamples, "fresh canaries a report needs")
	flag.Int64Var(&c.Canary.TTL, "canary-ttl", c.Canary.TTL, "blocks a canary outcome stays fresh")
	flag.Uint64Var(&c.Params.HealthCbServiceExcessPct, "service-excess", c.Params.HealthCbServiceExcessPct, "health_cb_service_excess_pct")
	flag.Uint64Var(&c.Params.HealthCbServiceWindowSamples, "service-window", c.Params.HealthCbServiceWindowSamples, "health_cb_service_window_samples")
	flag.Uint64Var(&c.Params.HealthCbServiceMinSamples, "service-min-samples", c.Params.HealthCbServiceMinSamples, "health_cb_service_min_samples")
	flag.Uint64Var(&c.Params.HealthCbServiceMissThresholdPct, "service-threshold", c.Params.HealthCbServiceMissThresholdPct, "health_cb_service_miss_threshold_pct")
	flag.Uint64Var(&c.Params.HealthCbServiceConsecutiveMisses, "service-consecutive", c.Params.HealthCbServiceConsecutiveMisses, "health_cb_service_consecutive_misses")
	flag.StringVar(&c.Canary.Policy, "canary-policy", c.Canary.Policy, "burst (the monitor today) or cusum (a candidate)")
	flag.IntVar(&c.Canary.P0, "canary-p0", c.Canary.P0, "cusum: the baseline failure rate, basis points")
	flag.IntVar(&c.Canary.P1, "canary-p1", c.Canary.P1, "cusum: the degraded failure rate, basis points")
	flag.IntVar(&c.Canary.H, "canary-h", c.Canary.H, "cusum: the alarm threshold, milli-nats")
	flag.BoolVar(&c.Canary.HeldTrigger, "canary-held-trigger", c.Canary.HeldTrigger, "a traffic miss the chain holds also starts a canary burst")
	flag.BoolVar(&c.Canary.FlagTrigger, "canary-flag-trigger", c.Canary.FlagTrigger, "validators with > 1/3 of the power reporting a rate above 0% start a burst everywhere")
	flag.IntVar(&c.Canary.FlagMaxRated, "canary-flag-max-rated", c.Canary.FlagMaxRated, "a validator rating more executors above 0% counts for none in the flag (-1: no limit)")
	flag.Int64Var(&c.Canary.FlagCooldown, "canary-flag-cooldown", c.Canary.FlagCooldown, "blocks between two bursts a flag starts at one executor")
	scenarios := flag.String("scenarios", "", "comma-separated scenarios (default all)")
	strategies := flag.String("strategies", "", "comma-separated strategies (default all)")
	out := flag.String("out", "", "directory to write table.md and outage.svg into")
	sweep := flag.Bool("sweep", false, "print the traffic trip-rule calibration table instead")
	flag.Parse()
	if *sweep {
		rows, err := sim.Sweep(c, sim.SweepRules(c))
		if err != nil {
			return err
		}
		return sim.WriteSweep(os.Stdout, rows)
	}
	results, err := sim.Run(c, split(*scenarios), split(*strategies))
	if err != nil {
		return err
	}
	if err := sim.WriteGoals(os.Stdout, c, results); err != nil {
		return err
	}
	if err := sim.WriteTable(os.Stdout, results); err != nil {
		return err
	}
	if *out == "" {
		return nil
	}
	return sim.WriteOutputs(*out, c, results)
}

func split(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}
