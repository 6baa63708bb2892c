package sim

import (
	"math/rand/v2"
	"testing"

	"cosmossdk.io/math"
	"github.com/stretchr/testify/require"

	"github.com/inferenced/inferenced/x/inference/breaker"
	"github.com/inferenced/inferenced/x/inference/types"
)

// The cross-check's case: six executors of unequal weight, three honest
// agents and a griefer, four validators (one lying, one flaky), one
// 400-block epoch with the keeper fixture's 10-block expiration, and a
// plan that takes every path of the breaker at least once.
const (
	crossDark, crossDegraded, crossGriefed, crossFailing = 2, 1, 3, 4
	crossBlocks                                          = 400
)

func crossConfig() Config {
	p := types.DefaultParams()
	p.EpochLength, p.ExpirationBlocks = crossBlocks, 10
	// Short cooldowns, so an excluded executor is probed, re-excluded and
	// restored within the run. A laxer SPRT (h = 20, gonka's is 4): at 4
	// it makes the degraded executor INACTIVE before its probes have been
	// through every path; at 20 only the 90% one goes.
	p.HealthCbInitialCooldownBlocks, p.HealthCbMaxCooldownBlocks = 5, 40
	p.DowntimeHThreshold = math.LegacyNewDec(20)
	return Config{
		Seed: 27, Executors: 6, Weights: "skewed",
		Validators: 4, Flaky: 1, Byzantine: 1, FlakyPct: 10,
		Agents: 3, Griefers: 1, RequestsPerBlock: 8,
		EpochLength: crossBlocks, Epochs: 1, HonestEpochs: 1, ExpirationBlocks: 10, Targets: 1,
		Params: p, Canary: DefaultCanaryConfig(),
	}
}

// crossScenario, every executor missing 3% at random besides:
//   - executor 2 dark in blocks 60..139: attested misses exclude it, each
//     promotion to PROBE meets another attested miss, and attestation
//     restores it once it is back;
//   - executor 1 misses 80% in blocks 40..199, its health endpoint up:
//     traffic misses that pair across agents exclude it, its probes miss
//     (held, then counted with another agent's; the agent whose probe was
//     held is refused the next one) until one succeeds;
//   - executor 4 misses 90% in blocks 100..199, while 1 and 2 are out: the
//     cap keeps it in, and its counted misses make the SPRT fire;
//   - executor 3 dark in blocks 220..239 while the griefer starts two
//     inferences a block on it from block 210 and never forwards them:
//     the attested misses count its first ones (uncharged), its starts
//     are refused while 3 is excluded, and once 3 is back its misses are
//     held, charged, and stop it at the allowance's eleventh.
func crossScenario() Scenario {
	return Scenario{Name: "keeper-cross-check", plan: func(c Config, _ *rand.Rand, _ int64) Plan {
		p := newPlan(c)
		p.BaselineBP = 300
		p.Faults[crossDark] = []Fault{{From: 60, To: 140, MissBP: 10_000, Down: true}}
		p.Faults[crossDegraded] = []Fault{{From: 40, To: 200, MissBP: 8_000}}
		p.Faults[crossGriefed] = []Fault{{From: 220, To: 240, MissBP: 10_000, Down: true}}
		p.Faults[crossFailing] = []Fault{{From: 100, To: 200, MissBP: 9_000}}
		p.Grief = Grief{PerBlock: 2, Target: crossGriefed, From: 210}
		return p
	}}
}

// TestKeeperAgreesWithTheChainStrategy replays the chain strategy's run of
// the cross-check case through the real keeper, request by request: the
// same attested samples, finishes, starts (routed ones drawn by the
// keeper's RandomExecutor with the request's seed) and expiries, block by
// block. After every block each executor's breaker record (as the
// ExecutorHealth query shows it), epoch stats and status, and each agent's
// standing must be the same on both sides.
//
// Attacks both sides must handle alike: a griefing agent that never
// forwards (its misses held and charged until it is stopped), an agent
// asking again for a probe it let expire (probe hoarding, ProbeHeldFrom),
// and a lying validator (one of four, outvoted).
func TestKeeperAgreesWithTheChainStrategy(t *testing.T) {
	f := crossCheck(t, crossConfig(), true, crossScenario())
	// The case must have been eventful, or agreement proves nothing.
	require.Positive(t, f.exclusions[breaker.Attested], "no exclusion by attested evidence")
	require.Positive(t, f.exclusions[breaker.Traffic], "no exclusion by traffic evidence")
	require.Positive(t, f.probes, "no probe started")
	require.Positive(t, f.restores[breaker.ReasonProbeSucceeded], "no executor restored by its probe")
	require.Positive(t, f.restores[breaker.ReasonAttestedOK], "no executor restored by attestation")
	require.Positive(t, f.inactive, "the SPRT never fired")
	require.Positive(t, f.stoppedAgents, "no agent stopped")
	require.Positive(t, f.stoppedRefusals, "no start refused for a stopped agent")
	require.Positive(t, f.notRoutable, "no start refused as not routable")
	require.Positive(t, f.probeRefusals, "no agent refused a second probe (ProbeHeldFrom)")
	require.Positive(t, f.capRefusals, "the exclusion cap never refused")
	require.Positive(t, f.heldMisses, "no miss ever held")
	require.Positive(t, f.refunds, "no charged miss ever refunded by an attestation")
}

// TestKeeperAgreesWithTheCanaryStrategy is the main case under
// chain+canary: the validators' canaries (one of four lying, one flaky)
// give service samples beside the liveness ones, and the keeper, fed the
// same service rates in its bundles, must decide what the simulator
// decided: service exclusions, re-exclusions from PROBE, restores by the
// canaries with no probe inference, and held traffic misses counted by a
// service miss.
func TestKeeperAgreesWithTheCanaryStrategy(t *testing.T) {
	f := crossCheckStrategy(t, crossConfig(), "chain+canary", crossScenario())
	require.Positive(t, f.exclusions[breaker.Service], "no exclusion by service evidence")
	require.Positive(t, f.restores[breaker.ReasonServiceOK], "no executor restored by the canaries")
	require.Positive(t, f.exclusions[breaker.Attested], "no exclusion by attested evidence")
}

// TestKeeperAgreesWhenSelectionFallsBack: two executors, a cap that lets
// both be excluded, both dark in blocks 30..59. Once both are out, the
// selection falls back to the pool before the health stage, and the
// starts it routes there are accepted although their executor is
// EXCLUDED.
func TestKeeperAgreesWhenSelectionFallsBack(t *testing.T) {
	c := crossConfig()
	c.Executors, c.Weights, c.Agents, c.RequestsPerBlock = 2, "equal", 2, 4
	c.EpochLength, c.Params.EpochLength = 120, 120
	c.Params.HealthCbMaxExcludedWeightPct = 100
	f := crossCheck(t, c, true, Scenario{Name: "keeper-fallback", plan: func(c Config, _ *rand.Rand, _ int64) Plan {
		p := newPlan(c)
		p.Faults[0] = []Fault{{From: 30, To: 60, MissBP: 10_000, Down: true}}
		p.Faults[1] = []Fault{{From: 30, To: 60, MissBP: 10_000, Down: true}}
		return p
	}})
	require.Positive(t, f.fallbacks, "selection never fell back")
	require.Positive(t, f.exclusions[breaker.Attested], "no exclusion by attested evidence")
}

// TestKeeperAgreesAcrossAnEpochBoundary: two 100-block epochs, executor 0
// dark in blocks 80..129 and 180..229 and a griefer on executor 1 from
// block 70 of each: the boundary clears the breaker, the SPRT and the
// agents' standing while an outage goes on and inferences of the old epoch
// are still in flight, and the votes about the old epoch's group (cast in
// its last block and in the new epoch's first) reach nothing.
func TestKeeperAgreesAcrossAnEpochBoundary(t *testing.T) {
	c := crossConfig()
	c.Executors, c.Weights, c.Agents, c.RequestsPerBlock = 4, "equal", 2, 6
	c.EpochLength, c.Params.EpochLength, c.Epochs = 100, 100, 2
	f := crossCheck(t, c, true, Scenario{Name: "keeper-epochs", plan: func(c Config, _ *rand.Rand, start int64) Plan {
		p := newPlan(c)
		// Each epoch's plan holds the faults of both, so the first outage
		// runs on across the boundary.
		p.Faults[0] = []Fault{{From: 80, To: 130, MissBP: 10_000, Down: true}, {From: 180, To: 230, MissBP: 10_000, Down: true}}
		p.Grief = Grief{PerBlock: 2, Target: 1, From: start + 69}
		return p
	}})
	require.Positive(t, f.exclusions[breaker.Attested], "no exclusion by attested evidence")
	require.Equal(t, 2, f.stoppedAgents, "the griefer is stopped in each epoch (its standing resets at the boundary)")
}

// TestKeeperAgreesUnderOtherParams runs the main case again in shadow
// mode (the breaker records but does not route), with a single agent's
// word enough to count a traffic miss, and as the chain-traffic strategy
// (no validator attests: every bundle is empty).
func TestKeeperAgreesUnderOtherParams(t *testing.T) {
	for _, tc := range []struct {
		name    string
		attests bool
		edit    func(*types.Params)
	}{
		{"shadow", true, func(p *types.Params) { p.HealthCbEnforce = false }},
		{"one-agent-evidence", true, func(p *types.Params) { p.HealthCbTrafficMinAgents = 1 }},
		{"traffic-only", false, func(*types.Params) {}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := crossConfig()
			c.EpochLength, c.Params.EpochLength = 300, 300 // past the griefer's stop
			tc.edit(&c.Params)
			f := crossCheck(t, c, tc.attests, crossScenario())
			require.Positive(t, f.exclusions[breaker.Attested]+f.exclusions[breaker.Traffic], "no exclusion")
		})
	}
}

// crossCheck records sc's run under the chain strategy (chain-traffic
// unless attests), replays it through the keeper comparing after every
// block, and returns what the run exercised.
func crossCheck(t *testing.T, c Config, attests bool, sc Scenario) crossFigures {
	t.Helper()
	strategy := "chain-traffic"
	if attests {
		strategy = "chain"
	}
	return crossCheckStrategy(t, c, strategy, sc)
}

// crossCheckStrategy is crossCheck of the named chain strategy.
func crossCheckStrategy(t *testing.T, c Config, strategy string, sc Scenario) crossFigures {
	t.Helper()
	tape, _, err := recordRun(c, sc, strategy)
	require.NoError(t, err)
	r := newReplay(t, c)
	var f crossFigures
	for i := range tape {
		r.block(&tape[i], &f)
		r.compare(&tape[i])
		f.after(tape, i)
	}
	r.compareStored(&tape[len(tape)-1])
	t.Logf("%s: %d blocks, %d starts (%d drawn by the fallback; %d refused: %d agent stopped, %d not routable, %d probe refused), "+
		"exclusions %d attested / %d traffic / %d service, %d probes, restores %d by probe / %d by attestation / %d by service, "+
		"%d cap refusals, %d refunds, %d INACTIVE, %d agent stops",
		sc.Name, len(tape), f.starts, f.fallbacks, f.refused, f.stoppedRefusals, f.notRoutable, f.probeRefusals,
		f.exclusions[breaker.Attested], f.exclusions[breaker.Traffic], f.exclusions[breaker.Service], f.probes,
		f.restores[breaker.ReasonProbeSucceeded], f.restores[breaker.ReasonAttestedOK], f.restores[breaker.ReasonServiceOK],
		f.capRefusals, f.refunds, f.inactive, f.stoppedAgents)
	return f
}

// TestKeeperAgreesOnEveryScenario runs each of the simulator's own
// scenarios, at a small scale (six executors, one 120-block epoch),
// through the cross-check, under chain and chain+canary.
func TestKeeperAgreesOnEveryScenario(t *testing.T) {
	for _, strategy := range []string{"chain", "chain+canary"} {
		for _, sc := range Scenarios() {
			t.Run(strategy+"/"+sc.Name, func(t *testing.T) {
				c := sc.config(crossConfig())
				c.Targets, c.RequestsPerBlock = 2, 6
				c.EpochLength, c.Params.EpochLength = 120, 120
				sc.Epochs, sc.Honest = 0, false
				crossCheckStrategy(t, c, strategy, sc)
			})
		}
	}
}
