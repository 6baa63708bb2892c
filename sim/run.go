package sim

import (
	"fmt"
	"runtime"
	"sync"
	"time"
)

// Strategies are the designs compared, in report order.
var Strategies = []string{"none", "sprt", "seed", "chain-traffic", "chain", "chain+canary", "envoy-peer", "chain+peer-gate"}

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
	case "chain+canary":
		s, err := newChain(name, c, true)
		if err == nil {
			s.canaries = true
		}
		return s, err
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
	err := parallel(len(strategies), func(i int) error {
		var err error
		if figs[i], err = runOne(c, sc, strategies[i]); err != nil {
			return fmt.Errorf("%s: %w", strategies[i], err)
		}
		return nil
	})
	return figs, err
}

// parallel runs f(0), ..., f(n-1) on every core, each call independent,
// and returns the error of the lowest i that failed.
func parallel(n int, f func(i int) error) error {
	errs := make([]error, n)
	jobs := make(chan int)
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				errs[i] = f(i)
			}
		}()
	}
	for i := range n {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

func runOne(c Config, sc Scenario, name string) (Figures, error) {
	c = sc.config(c)
	s, err := newStrategy(name, c)
	if err != nil {
		return Figures{}, err
	}
	w := newWorld(c, sc, s)
	m, err := w.run()
	if err != nil {
		return Figures{}, err
	}
	f := m.figures(sc.Name, name)
	f.CanaryLoad = float64(w.canaries.sent) / float64(int64(c.Executors)*c.EpochLength*int64(w.epochs()))
	return f, nil
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}
