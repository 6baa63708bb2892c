package sim

import (
	"fmt"
	"runtime"
	"sync"
	"time"
)

// Strategies are the designs compared, in report order.
var Strategies = []string{"none", "sprt", "seed", "chain-traffic", "chain", "envoy-peer", "chain+peer-gate"}

// newStrategy builds a strategy by name.
func newStrategy(name string, c Config) (Strategy, error) {
	switch name {
	case "none":
		return newBaseline(name, c, false, false)
	case "sprt":
		return newBaseline(name, c, true, false)
	case "seed":
		return newBaseline(name, c, true, true)
	case "chain-traffic":
		return newChain(name, c, false)
	case "chain":
		return newChain(name, c, true)
	case "envoy-peer":
		return newEnvoy(c)
	case "chain+peer-gate":
		return newGated(c)
	}
	return nil, fmt.Errorf("unknown strategy %q (have %v)", name, Strategies)
}

// Result is one scenario's figures for every strategy, and how long the
// scenario took to simulate (all strategies, in parallel).
type Result struct {
	Scenario Scenario
	Figures  []Figures
	Epochs   int
	Elapsed  time.Duration
}

// Run simulates the named scenarios (all when empty) under the named
// strategies (all when empty), runs in parallel on every core.
func Run(c Config, scenarios, strategies []string) ([]Result, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	if gonkaSPRT() == nil {
		return nil, fmt.Errorf("gonka mainnet's SPRT settings were expected to be refused as a test that never fires")
	}
	if len(strategies) == 0 {
		strategies = Strategies
	}
	var out []Result
	for _, sc := range Scenarios() {
		if len(scenarios) > 0 && !contains(scenarios, sc.Name) {
			continue
		}
		began := time.Now()
		figs, err := runScenario(c, sc, strategies)
		if err != nil {
			return nil, fmt.Errorf("scenario %s: %w", sc.Name, err)
		}
		out = append(out, Result{Scenario: sc, Figures: figs, Epochs: c.epochsOf(sc), Elapsed: time.Since(began)})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no scenario named %v", scenarios)
	}
	return out, nil
}

func runScenario(c Config, sc Scenario, strategies []string) ([]Figures, error) {
	figs := make([]Figures, len(strategies))
	errs := make([]error, len(strategies))
	jobs := make(chan int)
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				figs[i], errs[i] = runOne(c, sc, strategies[i])
			}
		}()
	}
	for i := range strategies {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			return nil, fmt.Errorf("%s: %w", strategies[i], err)
		}
	}
	return figs, nil
}

func runOne(c Config, sc Scenario, name string) (Figures, error) {
	s, err := newStrategy(name, c)
	if err != nil {
		return Figures{}, err
	}
	m, err := newWorld(c, sc, s).run()
	if err != nil {
		return Figures{}, err
	}
	return m.figures(sc.Name, name), nil
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}
