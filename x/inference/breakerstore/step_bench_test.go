package breakerstore

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"syscall"
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

// BenchmarkStep is one block's breaker step at 10,000 executors: today's
// (Store.Step) and the code of before the write-back step (legacy)
// interleaved in one loop, each on a committed store of its own, built so
// that the group's reads cost what the keeper's do (stepEnv). Steady: the
// scenario's attestations were applied by the same step in the 24 blocks
// before and committed, so the records (and today's streaks item) are in
// their steady state, as on a chain where the fault has lasted a while;
// first: the first block of the
// fault, every record new (best of 5). Each measured block runs on a
// throw-away cache of the committed store.
//
// Metrics: µs-steady (wall) and cpu-µs-steady (the process's CPU time,
// which other processes on the machine do not inflate) and µs-first of
// each, µs per sample the steady block applied, allocations. With -v, the
// parts of each step's fastest steady run (step_parts_test.go: the same
// step taken apart with a clock between the parts, run in the same loop)
// per sample of each pass.
func BenchmarkStep(b *testing.B) {
	for _, sc := range stepScenarios {
		b.Run(sc.name, func(b *testing.B) { benchStep(b, sc) })
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

func benchStep(b *testing.B, sc stepScenario) {
	impls := [2]stepper{stepLegacy, stepToday}
	// run holds the parts of the run in progress, parts those of each
	// step's fastest run (the one other processes disturbed least).
	var run, parts [2]stepParts
	timed := [2]stepper{partsStepper("legacy", legacyParts, &run[0]), partsStepper("today", todayParts, &run[1])}

	first := newStepBench(b, stepBenchExecutors, sc)
	var firstBest [2]time.Duration
	for k := range 10 {
		i := k % 2
		if _, d := first.try(b, impls[i]); firstBest[i] == 0 || d < firstBest[i] {
			firstBest[i] = d
		}
	}

	// The steady state, reached by each step on a store of its own (the
	// records read the same whichever step ran, TestStepMatchesLegacy,
	// but today's store also holds the streaks item and the held bits).
	var sb [2]*stepBench
	for i, impl := range impls {
		sb[i] = newStepBench(b, stepBenchExecutors, sc)
		for range stepBenchWarmup {
			sb[i].run(b, impl)
		}
	}
	applied, _ := sb[1].try(b, stepToday)
	var steady, cpu [2]time.Duration
	k := 0
	for b.Loop() {
		for j := range 2 {
			i := (k + j) % 2
			c := cpuTime(b)
			_, d := sb[i].try(b, impls[i])
			cpu[i] += cpuTime(b) - c
			steady[i] += d
			run[i] = stepParts{}
			sb[i].try(b, timed[i])
			if k == 0 || run[i].total() < parts[i].total() {
				parts[i] = run[i]
			}
		}
		k++
	}
	for i, impl := range impls {
		us := float64(steady[i].Nanoseconds()) / 1e3 / float64(b.N)
		b.ReportMetric(us, "µs-steady-"+impl.name)
		b.ReportMetric(float64(cpu[i].Nanoseconds())/1e3/float64(b.N), "cpu-µs-steady-"+impl.name)
		b.ReportMetric(float64(firstBest[i].Nanoseconds())/1e3, "µs-first-"+impl.name)
		if n := applied.AttestedMisses + applied.AttestedOKs + applied.ServiceMisses + applied.ServiceOKs; n > 0 {
			b.ReportMetric(us/float64(n), "µs/sample-"+impl.name)
		}
		b.ReportMetric(float64(mallocs(func() { sb[i].try(b, impl) })), "allocs-"+impl.name)
	}
	b.ReportMetric(float64(steady[0])/float64(steady[1]), "legacy/today")
	b.Logf("%s: attested %d misses + %d oks, service %d misses + %d oks per block", sc.name,
		applied.AttestedMisses, applied.AttestedOKs, applied.ServiceMisses, applied.ServiceOKs)
	logParts(b, applied, parts)
}

// logParts logs the parts of each step's fastest run, per sample of each
// pass (µs, over the samples the pass applied) and for the rest of the
// step (µs).
func logParts(b *testing.B, applied Applied, parts [2]stepParts) {
	const runs = 1
	attested := applied.AttestedMisses + applied.AttestedOKs
	service := applied.ServiceMisses + applied.ServiceOKs
	us := func(d time.Duration, per int) string {
		if per == 0 {
			return "-"
		}
		return fmt.Sprintf("%.2f", float64(d.Nanoseconds())/1e3/float64(runs)/float64(per))
	}
	b.Logf("%-8s | %-27s | %-27s | %-23s", "part", "attested pass µs/sample", "service pass µs/sample", "rest of the step µs")
	b.Logf("%-8s | %13s %13s | %13s %13s | %11s %11s", "", "legacy", "today", "legacy", "today", "legacy", "today")
	var total [2]stepParts
	for p := range numParts {
		b.Logf("%-8s | %13s %13s | %13s %13s | %11s %11s", partNames[p],
			us(parts[0].attested[p], attested), us(parts[1].attested[p], attested),
			us(parts[0].service[p], service), us(parts[1].service[p], service),
			us(parts[0].rest[p], 1), us(parts[1].rest[p], 1))
		for i := range 2 {
			total[i].attested[0] += parts[i].attested[p]
			total[i].service[0] += parts[i].service[p]
			total[i].rest[0] += parts[i].rest[p]
		}
	}
	b.Logf("%-8s | %13s %13s | %13s %13s | %11s %11s", "total",
		us(total[0].attested[0], attested), us(total[1].attested[0], attested),
		us(total[0].service[0], service), us(total[1].service[0], service),
		us(total[0].rest[0], 1), us(total[1].rest[0], 1))
}

// cpuTime is the CPU time the process has used (user and system, the
// garbage collector's included): unlike the wall clock, it does not grow
// while other processes hold the CPU.
func cpuTime(tb testing.TB) time.Duration {
	var ru syscall.Rusage
	require.NoError(tb, syscall.Getrusage(syscall.RUSAGE_SELF, &ru))
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// mallocs is how many heap allocations one run of f makes.
func mallocs(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.Mallocs - before.Mallocs
}
