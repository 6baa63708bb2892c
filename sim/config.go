// Package sim is the outage simulator: a seeded, deterministic model of the
// inference network in which the project's real breaker, evidence ledger,
// judge, aggregation, lottery and SPRT code decide, block by block, where
// requests go, compared side by side with the designs they replace. It runs
// in-process with no network and no store; keeper_test.go replays a small
// run through the real keeper and checks it reaches the same outcomes.
//
// The simulator is not consensus code: it uses goroutines (one run per
// scenario and strategy) and floats for its reports, never for a decision
// the chain would make.
package sim

import (
	"errors"
	"fmt"

	"github.com/inferenced/inferenced/x/inference/types"
)

// Config is one simulation's knobs. DefaultConfig is gonka-like.
type Config struct {
	Seed uint64
	// Executors in the epoch group; Weights "equal" or "skewed" (weight
	// falls with rank, the largest 20x the smallest).
	Executors int
	Weights   string
	// Validators, of which Flaky report a spurious miss or nothing in a
	// share of their verdicts and Byzantine lie (miss for a live executor,
	// ok for a dead one); all have equal power.
	Validators, Flaky, Byzantine int
	// FlakyPct is how often a flaky monitor errs (half spurious misses,
	// half unknowns).
	FlakyPct int
	// MonitorLag is how many blocks old a monitor's verdict is when it
	// votes (0: it probed during the block).
	MonitorLag int
	// Agents is the number of honest transfer agents (requests are spread
	// over them round-robin). gonka has many; more agents corroborate more
	// honest misses too, so 16 is the harder case for false exclusions.
	Agents int
	// Griefers is the number of agents that run a scenario's griefing
	// campaign (Plan.Grief); they come after the honest agents.
	Griefers int
	// RequestsPerBlock is the network's client load.
	RequestsPerBlock int
	// EpochLength in blocks (gonka: 17,280) and Epochs per scenario run;
	// the honest baselines run HonestEpochs.
	EpochLength          int64
	Epochs, HonestEpochs int
	// ExpirationBlocks: a request not finished by then is a miss.
	ExpirationBlocks int64
	// Targets is how many executors a fault scenario affects per epoch.
	Targets int
	// Canaries: how each validator's monitor sends canary inferences
	// (the chain+canary strategy reads them).
	Canary CanaryConfig
	// Params are the chain's params (trip rules, cooldowns, cap, SPRT,
	// agents' allowance).
	Params types.Params
}

// DefaultConfig is the gonka-like network the issue names: 100 executors,
// ~5,000 inferences per executor per 17,280-block epoch.
func DefaultConfig() Config {
	p := types.DefaultParams()
	p.EpochLength = 17_280
	return Config{
		Seed: 1, Executors: 100, Weights: "equal",
		Validators: 10, Flaky: 2, Byzantine: 3, FlakyPct: 10, MonitorLag: 0,
		Agents: 16, Griefers: 1, RequestsPerBlock: 29,
		EpochLength: 17_280, Epochs: 2, HonestEpochs: 20, ExpirationBlocks: int64(p.ExpirationBlocks),
		Targets: 10, Params: p, Canary: DefaultCanaryConfig(),
	}
}

// Validate checks the knobs, one rule per error.
func (c Config) Validate() error {
	switch {
	case c.Executors < 2 || c.Executors > 10_000:
		return fmt.Errorf("executors %d outside 2..10000", c.Executors)
	case c.Weights != "equal" && c.Weights != "skewed":
		return fmt.Errorf("weights %q: want equal or skewed", c.Weights)
	case c.Validators < 1 || c.Validators > 150:
		return fmt.Errorf("validators %d outside 1..150", c.Validators)
	case c.Flaky < 0 || c.Byzantine < 0 || c.Flaky+c.Byzantine > c.Validators:
		return fmt.Errorf("flaky %d + byzantine %d exceed %d validators", c.Flaky, c.Byzantine, c.Validators)
	case 3*c.Byzantine >= c.Validators:
		return fmt.Errorf("byzantine %d of %d validators: the chain's safety needs fewer than a third", c.Byzantine, c.Validators)
	case c.FlakyPct < 0 || c.FlakyPct > 100:
		return fmt.Errorf("flaky error rate %d%% outside 0..100", c.FlakyPct)
	case c.MonitorLag < 0:
		return errors.New("monitor lag must not be negative")
	case c.Agents < 1:
		return errors.New("at least one honest transfer agent")
	case c.Griefers < 1 || c.Griefers > 8:
		return fmt.Errorf("griefers %d outside 1..8", c.Griefers)
	case c.RequestsPerBlock < 0:
		return errors.New("requests per block must not be negative")
	case c.EpochLength < 100:
		return fmt.Errorf("epoch length %d: at least 100 blocks", c.EpochLength)
	case c.Epochs < 1 || c.HonestEpochs < 1:
		return errors.New("at least one epoch")
	case c.ExpirationBlocks < 1:
		return errors.New("expiration must be at least 1 block")
	case c.Targets < 1 || c.Targets > c.Executors/2:
		return fmt.Errorf("targets %d outside 1..%d (half the executors)", c.Targets, c.Executors/2)
	}
	if err := c.Canary.Validate(); err != nil {
		return fmt.Errorf("canaries: %w", err)
	}
	p := c.Params
	p.EpochLength = uint64(c.EpochLength)
	p.ExpirationBlocks = uint64(c.ExpirationBlocks)
	if err := p.Validate(); err != nil {
		return fmt.Errorf("params: %w", err)
	}
	return nil
}

// weights are the executors' epoch weights.
func (c Config) weights() []uint64 {
	w := make([]uint64, c.Executors)
	for i := range w {
		w[i] = 100
		if c.Weights == "skewed" {
			// 2000 down to 100: rank i of n gets 100 + 1900*(n-1-i)/(n-1).
			w[i] = 100 + uint64(1900*(c.Executors-1-i)/(c.Executors-1))
		}
	}
	return w
}

// epochsOf is how many epochs scenario sc runs.
func (c Config) epochsOf(sc Scenario) int {
	switch {
	case sc.Honest:
		return c.HonestEpochs
	case sc.Epochs > 0:
		return sc.Epochs
	}
	return c.Epochs
}
