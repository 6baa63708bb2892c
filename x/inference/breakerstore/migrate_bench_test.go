package breakerstore

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// BenchmarkBuildHeldBits is the v7 migration's work (BuildHeldBits: one
// walk of the records, one MemberIndex each) at 10,000 executors, on the
// store a dark fault leaves after 24 blocks: 30% of them held, and all
// of them (the worst case: every executor holds a record).
func BenchmarkBuildHeldBits(b *testing.B) {
	for _, sc := range []stepScenario{stepScenarios[1], {"dark-all", func(tb testing.TB, n int) Attestation {
		return scenarioBlock(tb, n, func(int) bool { return true }, func(int) bool { return false })
	}}} {
		b.Run(sc.name, func(b *testing.B) {
			sb := newStepBench(b, stepBenchExecutors, sc)
			for range stepBenchWarmup {
				sb.run(b, stepLegacy) // a version-6 store: records, no held bits
			}
			for b.Loop() {
				ctx, _ := sb.env.block(sb.height)
				require.NoError(b, sb.env.s.BuildHeldBits(ctx))
			}
			n, err := sb.env.s.heldCount(sb.env.base)
			require.NoError(b, err)
			b.ReportMetric(float64(n), "records")
		})
	}
}
