package routes_test

import (
	"fmt"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	sdk "github.com/cosmos/cosmos-sdk/types"

	"github.com/inferenced/inferenced/x/inference/keeper"
	"github.com/inferenced/inferenced/x/inference/routes"
	"github.com/inferenced/inferenced/x/inference/testutil"
	"github.com/inferenced/inferenced/x/inference/types"
)

// queriesPerBlock is the query load of one block in the selection
// benchmark: 290 GetRandomExecutor queries, every client request's first.
const queriesPerBlock = 290

// selectionNetwork is n members with every tenth EXCLUDED for the whole
// benchmark, with the breaker's stage or (stage false) none: shadow mode,
// where selection does not ask the breaker.
func selectionNetwork(b *testing.B, n int, stage bool) (keeper.Keeper, sdk.Context) {
	p := breakerParams()
	p.HealthCbMaxExcludedWeightPct = 100
	p.HealthCbEnforce = stage
	k, ctx, _ := testutil.Network(b, n, p, testutil.ExcludeEveryTenth(b, 1_000_000))
	return k, ctx
}

// BenchmarkSelectionQuery is GetRandomExecutor at 1,000 and 10,000 members
// (10% excluded), through the query server (route tables) and through the
// reference (the pre-table implementation), each with the breaker's health
// stage and without, all in one run. One iteration is one block: the
// committed height moves on, then (every eighth block, as it is slow) the
// reference answers one query of each kind, and the query server answers
// 290 of each, interleaved, the two orders alternating by block. Reported
// per query:
// old-* (reference), new-* (amortized over the block), new-*-first (the
// block's first query, which builds the table: the worst case), and the
// ratios health (new with / without the stage, per block) and speedup
// (old / new, with the stage); each the median over the blocks.
func BenchmarkSelectionQuery(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprintf("members=%d", n), func(b *testing.B) {
			kWith, ctxWith := selectionNetwork(b, n, true)
			kWithout, ctxWithout := selectionNetwork(b, n, false)
			qWith, qWithout := keeper.NewQueryServerImpl(kWith, routes.New(kWith)), keeper.NewQueryServerImpl(kWithout, routes.New(kWithout))
			stage := breakerStage(kWith)
			resp, err := qWith.GetRandomExecutor(ctxWith, &types.QueryGetRandomExecutorRequest{Model: "m"})
			require.NoError(b, err)
			require.Equal(b, uint32(n-n/10), resp.Candidates, "the health stage removes the excluded tenth")
			// Per-block samples; the machine is shared, so medians are reported
			// (a block whose table build is preempted would swamp a mean).
			var oldWith, oldWithout, newWith, newWithout, firstWith, firstWithout, healthRatio []float64
			timed := func(f func() error) time.Duration {
				start := time.Now()
				err := f()
				d := time.Since(start)
				if err != nil {
					b.Fatal(err)
				}
				return d
			}
			ns := func(d time.Duration) float64 { return float64(d.Nanoseconds()) }
			height, seed := int64(1), uint64(0)
			blocks := 0
			for b.Loop() {
				height++
				blocks++
				cw, cwo := ctxWith.WithBlockHeight(height), ctxWithout.WithBlockHeight(height)
				if blocks%8 == 1 {
					seed++
					oldWith = append(oldWith, ns(timed(func() error { _, err := referenceQuery(cw, kWith, stage, height, "m", seed); return err })))
					oldWithout = append(oldWithout, ns(timed(func() error { _, err := referenceQuery(cwo, kWithout, nil, height, "m", seed); return err })))
					runtime.GC() // the reference's garbage is not the query path's to collect
				}
				var with, without time.Duration
				for i := range queriesPerBlock {
					seed++
					req := &types.QueryGetRandomExecutorRequest{Model: "m", Seed: seed}
					var dw, dwo time.Duration
					if blocks%2 == 0 {
						dw = timed(func() error { _, err := qWith.GetRandomExecutor(cw, req); return err })
						dwo = timed(func() error { _, err := qWithout.GetRandomExecutor(cwo, req); return err })
					} else {
						dwo = timed(func() error { _, err := qWithout.GetRandomExecutor(cwo, req); return err })
						dw = timed(func() error { _, err := qWith.GetRandomExecutor(cw, req); return err })
					}
					with, without = with+dw, without+dwo
					if i == 0 {
						firstWith, firstWithout = append(firstWith, ns(dw)), append(firstWithout, ns(dwo))
					}
				}
				newWith, newWithout = append(newWith, ns(with)/queriesPerBlock), append(newWithout, ns(without)/queriesPerBlock)
				healthRatio = append(healthRatio, float64(with)/float64(without))
			}
			b.ReportMetric(median(oldWith), "old-with-ns/query")
			b.ReportMetric(median(oldWithout), "old-without-ns/query")
			b.ReportMetric(median(newWith), "new-with-ns/query")
			b.ReportMetric(median(newWithout), "new-without-ns/query")
			b.ReportMetric(median(firstWith), "new-with-first-ns")
			b.ReportMetric(median(firstWithout), "new-without-first-ns")
			b.ReportMetric(median(healthRatio), "health-ratio")
			b.ReportMetric(median(oldWith)/median(newWith), "speedup")
		})
	}
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}
