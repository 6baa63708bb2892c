package breakerstore

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	sdk "github.com/cosmos/cosmos-sdk/types"

	"github.com/inferenced/inferenced/x/inference/service"
	"github.com/inferenced/inferenced/x/inference/testutil/testkit"
	"github.com/inferenced/inferenced/x/inference/types"
	"github.com/inferenced/inferenced/x/inference/verdict"
)

// stepper runs one block's step: today's (Store.Step) or the code of
// before the write-back step (legacy, legacy_step_test.go).
type stepper struct {
	name string
	step func(Store, sdk.Context, Block) (Applied, error)
}

var (
	stepToday  = stepper{"today", func(s Store, ctx sdk.Context, b Block) (Applied, error) { return s.Step(ctx, b) }}
	stepLegacy = stepper{"legacy", func(s Store, ctx sdk.Context, b Block) (Applied, error) { return legacy{s}.Step(ctx, b) }}
)

// stepScenario is one block's attestations about a group of n, the same in
// every block of the scenario.
type stepScenario struct {
	name  string
	block func(tb testing.TB, n int) Attestation
}

// stepScenarios are the step benchmark's faults, as
// abci/preblock/attest_bench_test.go runs them through the keeper:
//   - dark-1pct: every 100th executor attested missed in every block, the
//     others ok; the service rates honest (the missed ones unknown: no
//     canary reaches them, most others 0%, a few at low rates);
//   - dark-30pct: the same 30% missed in every block; every validator
//     then abstains on service (more unknowns than a list holds);
//   - degraded-1pct: every 100th executor (from the 50th) answers its
//     health check (attested ok) but fails 60% of its canaries (a service
//     miss in every block), the others ok and honest.
var stepScenarios = []stepScenario{
	{"dark-1pct", func(tb testing.TB, n int) Attestation {
		return scenarioBlock(tb, n, func(i int) bool { return i%100 == 0 }, func(int) bool { return false })
	}},
	{"dark-30pct", func(tb testing.TB, n int) Attestation {
		r := rand.New(rand.NewPCG(1<<20, 30))
		dark := make([]bool, n)
		for i := range dark {
			dark[i] = r.IntN(10) < 3
		}
		return scenarioBlock(tb, n, func(i int) bool { return dark[i] }, func(int) bool { return false })
	}},
	{"degraded-1pct", func(tb testing.TB, n int) Attestation {
		return scenarioBlock(tb, n, func(int) bool { return false }, func(i int) bool { return i%100 == 50 })
	}},
}

// scenarioBlock packs the verdicts (a miss for dark executors, ok for the
// others) and the service rates (unknown for dark ones, 60% for degraded
// ones, a low rate for every 97th other, 0% else; all unknown when the
// unknowns alone would not fit a list).
func scenarioBlock(tb testing.TB, n int, dark, degraded func(int) bool) Attestation {
	tb.Helper()
	vs := make([]verdict.Verdict, n)
	rates := make([]service.Report, n)
	for i := range vs {
		switch {
		case dark(i):
			vs[i], rates[i] = verdict.Miss, service.Unknown
		case degraded(i):
			vs[i], rates[i] = verdict.OK, 60
		case i%97 == 3:
			vs[i], rates[i] = verdict.OK, 6
		default:
			vs[i] = verdict.OK
		}
	}
	packed, err := verdict.Pack(vs)
	require.NoError(tb, err)
	svc, err := service.Encode(service.Clamp(rates))
	require.NoError(tb, err)
	return Attestation{Members: n, Samples: packed, Service: svc}
}

// stepBenchParams are the keeper benchmark's (abci/preblock): the breaker
// tests' params without the exclusion cap.
func stepBenchParams() types.Params {
	p := testkit.BreakerParams()
	p.HealthCbMaxExcludedWeightPct = 100
	return p
}

const (
	stepBenchExecutors = 10_000
	stepBenchWarmup    = 24 // blocks of the scenario applied before the measured one
)

// BenchmarkStep is one block's breaker step at 10,000 executors, today's
// and the code of before the write-back step (legacy) side by side in one
// run, on a store of its own that the keeper's reads use the way the
// keeper does (stepEnv). Steady: the scenario's attestations were applied
// in the 24 blocks before, committed, so the records are in their steady
// state, as on a chain where the fault has lasted a while; first: the
// first block of the fault, every record new. Each measured block runs on
// a throw-away cache of the committed store.
//
// Metrics: µs-steady/op and µs-first; µs per attested miss and per
// service sample the step applied in the steady block; allocations.
func BenchmarkStep(b *testing.B) {
	for _, sc := range stepScenarios {
		for _, impl := range []stepper{stepLegacy, stepToday} {
			b.Run(fmt.Sprintf("%s/%s", sc.name, impl.name), func(b *testing.B) { benchStep(b, sc, impl) })
		}
	}
}

// stepBench is a group of n on a committed store, and the scenario's block.
type stepBench struct {
	env    *stepEnv
	att    Attestation
	params types.Params
	height int64 // the next block's
}

func newStepBench(tb testing.TB, n int, sc stepScenario) *stepBench {
	tb.Helper()
	env := newStepEnv(tb)
	members := make([]envMember, n)
	for i := range members {
		members[i] = envMember{addr: envAddr(i + 1), weight: 100, models: []string{"m"}}
	}
	ctx, cache := env.block(1)
	env.setGroup(tb, ctx, members)
	env.commit(cache)
	return &stepBench{env: env, att: sc.block(tb, n), params: stepBenchParams(), height: 2}
}

// run applies the scenario's block with impl and commits it.
func (sb *stepBench) run(tb testing.TB, impl stepper) {
	tb.Helper()
	ctx, cache := sb.env.block(sb.height)
	_, err := impl.step(sb.env.s, ctx, Block{Params: sb.params, Attested: sb.att})
	require.NoError(tb, err)
	sb.env.commit(cache)
	sb.height++
}

// try applies the next block with impl on a throw-away cache.
func (sb *stepBench) try(tb testing.TB, impl stepper) (Applied, time.Duration) {
	tb.Helper()
	ctx, _ := sb.env.block(sb.height)
	start := time.Now()
	applied, err := impl.step(sb.env.s, ctx, Block{Params: sb.params, Attested: sb.att})
	d := time.Since(start)
	require.NoError(tb, err)
	return applied, d
}

func benchStep(b *testing.B, sc stepScenario, impl stepper) {
	first := newStepBench(b, stepBenchExecutors, sc)
	var firstBest time.Duration
	for range 3 {
		if _, d := first.try(b, impl); firstBest == 0 || d < firstBest {
			firstBest = d
		}
	}
	sb := newStepBench(b, stepBenchExecutors, sc)
	for range stepBenchWarmup {
		sb.run(b, impl)
	}
	applied, _ := sb.try(b, impl)
	var steady time.Duration
	for b.Loop() {
		_, d := sb.try(b, impl)
		steady += d
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	sb.try(b, impl)
	runtime.ReadMemStats(&after)
	us := float64(steady.Nanoseconds()) / 1e3 / float64(b.N)
	b.ReportMetric(us, "µs-steady/op")
	b.ReportMetric(float64(firstBest.Nanoseconds())/1e3, "µs-first")
	if n := applied.AttestedMisses + applied.ServiceMisses + applied.ServiceOKs + applied.AttestedOKs; n > 0 {
		b.ReportMetric(us/float64(n), "µs/sample")
	}
	b.ReportMetric(float64(applied.AttestedMisses), "attested-misses")
	b.ReportMetric(float64(applied.AttestedOKs), "attested-oks")
	b.ReportMetric(float64(applied.ServiceMisses+applied.ServiceOKs), "service-samples")
	b.ReportMetric(float64(after.Mallocs-before.Mallocs), "allocs-steady")
}
