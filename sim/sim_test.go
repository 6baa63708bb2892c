package sim

import (
	"encoding/xml"
	"io"
	"reflect"
	"strings"
	"testing"

	"cosmossdk.io/math"
)

// small is a network the tests can run in a second or two.
func small() Config {
	c := DefaultConfig()
	c.Executors, c.RequestsPerBlock, c.Targets = 20, 6, 3
	c.Validators, c.Flaky, c.Byzantine = 4, 1, 1
	c.EpochLength, c.Epochs = 3_000, 1
	return c
}

func TestConfigValidate(t *testing.T) {
	cases := []struct {
		name   string
		change func(*Config)
		want   string // "" valid
	}{
		{"defaults", func(*Config) {}, ""},
		{"too few executors", func(c *Config) { c.Executors = 1 }, "executors"},
		{"unknown weights", func(c *Config) { c.Weights = "zipf" }, "weights"},
		{"too many validators", func(c *Config) { c.Validators = 151 }, "validators"},
		{"flaky and byzantine exceed validators", func(c *Config) { c.Flaky, c.Byzantine = 8, 3 }, "exceed"},
		{"a third byzantine", func(c *Config) { c.Validators, c.Flaky, c.Byzantine = 9, 0, 3 }, "fewer than a third"},
		{"flaky rate over 100", func(c *Config) { c.FlakyPct = 101 }, "flaky error rate"},
		{"negative monitor lag", func(c *Config) { c.MonitorLag = -1 }, "monitor lag"},
		{"no honest agent", func(c *Config) { c.Agents = 0 }, "agent"},
		{"negative load", func(c *Config) { c.RequestsPerBlock = -1 }, "requests"},
		{"short epoch", func(c *Config) { c.EpochLength = 50 }, "epoch length"},
		{"no epoch", func(c *Config) { c.Epochs = 0 }, "epoch"},
		{"no expiration", func(c *Config) { c.ExpirationBlocks = 0 }, "expiration"},
		{"targets over half", func(c *Config) { c.Targets = 51 }, "targets"},
		{"params the chain refuses", func(c *Config) { c.Params.HealthCbTrafficWindowSamples = 65 }, "params"},
		{"cooldown not below the epoch", func(c *Config) { c.EpochLength = 400 }, "params"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := DefaultConfig()
			tc.change(&c)
			err := c.Validate()
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("want valid, got %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("want an error about %q, got %v", tc.want, err)
			}
		})
	}
}

// TestDeterministic: the same config and seed give the same figures; the
// simulator's parallel runs share nothing.
func TestDeterministic(t *testing.T) {
	c := small()
	a, err := Run(c, []string{"dead", "grief"}, []string{"seed", "chain"})
	if err != nil {
		t.Fatal(err)
	}
	b, err := Run(c, []string{"dead", "grief"}, []string{"seed", "chain"})
	if err != nil {
		t.Fatal(err)
	}
	for i := range a {
		if !reflect.DeepEqual(a[i].Figures, b[i].Figures) {
			t.Fatalf("%s: two runs differ:\n%+v\n%+v", a[i].Scenario.Name, a[i].Figures, b[i].Figures)
		}
	}
	c.Seed = 2
	other, err := Run(c, []string{"dead"}, []string{"chain"})
	if err != nil {
		t.Fatal(err)
	}
	if reflect.DeepEqual(other[0].Figures[0], a[0].Figures[1]) {
		t.Fatal("another seed gave the very same figures")
	}
}

// TestDarkExecutor: on a small network the breaker with attestation routes
// fewer requests to a dark executor than traffic alone, which routes fewer
// than the SPRT, which routes fewer than no breaker; with attestation the
// executor is out within 3 blocks.
func TestDarkExecutor(t *testing.T) {
	res, err := Run(small(), []string{"dead"}, []string{"none", "sprt", "chain-traffic", "chain"})
	if err != nil {
		t.Fatal(err)
	}
	f := res[0].Figures
	none, sprtOnly, traffic, chain := f[0], f[1], f[2], f[3]
	if !(chain.RoutedBad < traffic.RoutedBad && traffic.RoutedBad < sprtOnly.RoutedBad && sprtOnly.RoutedBad < none.RoutedBad) {
		t.Fatalf("routed to a dark executor per outage: chain %.1f, traffic %.1f, sprt %.1f, none %.1f",
			chain.RoutedBad, traffic.RoutedBad, sprtOnly.RoutedBad, none.RoutedBad)
	}
	if chain.NeverOut != 0 || chain.ToOutBlocks > 3 {
		t.Fatalf("chain: %d outages never out, median %d blocks to out", chain.NeverOut, chain.ToOutBlocks)
	}
	if chain.NotBack != 0 {
		t.Fatalf("chain: %d executors never came back after their outage", chain.NotBack)
	}
}

// TestGriefing (attack: one funded account never forwards what it starts
// on a healthy executor): the chain never takes the target out; the SPRT
// alone, which trusts every miss, does.
func TestGriefing(t *testing.T) {
	c := small()
	c.Epochs = 2
	res, err := Run(c, []string{"grief"}, []string{"sprt", "chain-traffic", "chain"})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range res[0].Figures {
		switch {
		case f.Griefed != 2:
			t.Fatalf("%s: %d griefing campaigns, want 2", f.Strategy, f.Griefed)
		case f.Strategy == "sprt" && f.GriefedOut == 0:
			t.Fatal("sprt: the griefer never took its target out; the scenario proves nothing")
		case f.Strategy != "sprt" && f.GriefedOut != 0:
			t.Fatalf("%s: the griefer took its target out in %d epochs", f.Strategy, f.GriefedOut)
		}
	}
}

func TestUnknownNames(t *testing.T) {
	if _, err := Run(small(), []string{"nope"}, nil); err == nil {
		t.Fatal("an unknown scenario ran")
	}
	if _, err := Run(small(), []string{"dead"}, []string{"nope"}); err == nil {
		t.Fatal("an unknown strategy ran")
	}
}

// TestPeerCandidatesJudge: the peer candidates must judge executors at the
// configured traffic window (a volume above the window would silently turn
// them off): Envoy's rule ejects a degraded executor.
func TestPeerCandidatesJudge(t *testing.T) {
	c := small()
	c.Params.DowntimeHThreshold = math.LegacyNewDec(1_000) // so only the breaker takes it out
	res, err := Run(c, []string{"degraded-40"}, []string{"envoy-peer"})
	if err != nil {
		t.Fatal(err)
	}
	if f := res[0].Figures[0]; f.NeverOut == f.Episodes {
		t.Fatalf("envoy-peer never took a 40%%-miss executor out (%d faults)", f.Episodes)
	}
}

// TestPlotIsWellFormed: the committed plot is valid SVG naming every
// strategy, with a goal line in the panels that have one.
func TestPlotIsWellFormed(t *testing.T) {
	res, err := Run(small(), []string{"dead", "degraded-28", "honest-5"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	out := svg(plotPanels(res))
	dec := xml.NewDecoder(strings.NewReader(out))
	for {
		if _, err := dec.Token(); err == io.EOF {
			break
		} else if err != nil {
			t.Fatalf("not well-formed SVG: %v", err)
		}
	}
	for _, s := range Strategies {
		if !strings.Contains(out, ">"+s+"</text>") {
			t.Errorf("strategy %s has no label", s)
		}
	}
	if n := strings.Count(out, "goal "); n != 2 {
		t.Errorf("%d goal lines, want 2", n)
	}
}
