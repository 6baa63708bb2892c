package keeper_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	storetypes "github.com/cosmos/cosmos-sdk/store/v2/types"
	"github.com/stretchr/testify/require"

	sdk "github.com/cosmos/cosmos-sdk/types"

	"github.com/inferenced/inferenced/x/inference/keeper"
	"github.com/inferenced/inferenced/x/inference/lottery"
	"github.com/inferenced/inferenced/x/inference/testutil"
	"github.com/inferenced/inferenced/x/inference/types"
)

// benchNetwork is testutil.Network with the breaker's test params and
// no exclusion cap in the way.
func benchNetwork(b *testing.B, n int, setup func(keeper.Keeper, sdk.Context, []sdk.AccAddress)) (keeper.Keeper, sdk.Context, []sdk.AccAddress) {
	b.Helper()
	p := breakerParams()
	p.HealthCbMaxExcludedWeightPct = 100
	return testutil.Network(b, n, p, setup)
}

// BenchmarkSelectionHealthStage draws from 1,000 members with 10% excluded,
// with the breaker's health stage and without (the same state in shadow
// mode, where selection does not ask the breaker), interleaved in one run;
// the ratio metric is the cost of the health stage (goal <= 1.2).
func BenchmarkSelectionHealthStage(b *testing.B) {
	network := func(enforce bool) (keeper.Keeper, sdk.Context) {
		p := breakerParams()
		p.HealthCbMaxExcludedWeightPct = 100
		p.HealthCbEnforce = enforce
		k, ctx, _ := testutil.Network(b, 1000, p, testutil.ExcludeEveryTenth(b, 100))
		return k, ctx
	}
	kWith, ctxWith := network(true)
	kWithout, ctxWithout := network(false)
	sel, err := kWith.Candidates(ctxWith, "m", 2)
	require.NoError(b, err)
	require.Len(b, sel.Pool, 900, "the health stage removes the 100 excluded")
	var with, without time.Duration
	seed := uint64(0)
	draw := func(k keeper.Keeper, ctx sdk.Context) time.Duration {
		seed++
		start := time.Now()
		_, err := k.RandomExecutor(ctx, "m", seed, 2)
		d := time.Since(start)
		if err != nil {
			b.Fatal(err)
		}
		return d
	}
	b.ResetTimer()
	for b.Loop() {
		with += draw(kWith, ctxWith)
		without += draw(kWithout, ctxWithout)
	}
	b.ReportMetric(float64(with.Nanoseconds())/float64(b.N), "ns-with/op")
	b.ReportMetric(float64(without.Nanoseconds())/float64(b.N), "ns-without/op")
	b.ReportMetric(float64(with)/float64(without), "ratio")
}

// writeCounter counts store writes and deletes through the gas meter.
type writeCounter struct {
	storetypes.GasMeter
	writes int
}

func (w *writeCounter) ConsumeGas(amount storetypes.Gas, descriptor string) {
	if descriptor == storetypes.GasWriteCostFlatDesc || descriptor == storetypes.GasDeleteDesc {
		w.writes++
	}
	w.GasMeter.ConsumeGas(amount, descriptor)
}

// BenchmarkBreakerBlock is the breaker's work for one block at 1,000
// executors that each finished (or missed) one inference: queueing the
// outcomes, then the next block's step. It reports the store writes.
func BenchmarkBreakerBlock(b *testing.B) {
	for _, missingPct := range []int{0, 10} {
		b.Run(fmt.Sprintf("missing=%d%%", missingPct), func(b *testing.B) {
			k, ctx, addrs := benchNetwork(b, 1000, func(k keeper.Keeper, ctx sdk.Context, _ []sdk.AccAddress) {
				p, err := k.Params.Get(ctx)
				if err != nil {
					b.Fatal(err)
				}
				p.HealthCbTrafficMinAgents = types.DefaultHealthCBTrafficMinAgents // the default rule
				if err := k.SetParams(ctx, p); err != nil {
					b.Fatal(err)
				}
			})
			execs := make([]string, len(addrs))
			for i, a := range addrs {
				execs[i], _ = ac.BytesToString(a)
			}
			var agents []string // two agents take turns, so misses are corroborated
			for _, a := range testutil.Agents() {
				s, _ := ac.BytesToString(a)
				agents = append(agents, s)
			}
			height := int64(1)
			var writes int
			for b.Loop() {
				height++
				counter := &writeCounter{GasMeter: storetypes.NewInfiniteGasMeter()}
				c := ctx.WithBlockHeight(height).WithGasMeter(counter).WithEventManager(sdk.NewEventManager())
				for i, e := range execs {
					miss := missingPct > 0 && i%(100/missingPct) == 0
					inf := types.Inference{InferenceId: fmt.Sprintf("i-%d-%d", height, i), Executor: e,
						TransferAgent: agents[(int(height)+i)%2], StartHeight: height, EndHeight: height}
					if err := k.Breaker().QueueOutcome(c, inf, miss); err != nil {
						b.Fatal(err)
					}
				}
				if _, _, err := k.ApplyHealth(c.WithBlockHeight(height+1), 0, 0, nil, nil); err != nil {
					b.Fatal(err)
				}
				writes += counter.writes
			}
			b.ReportMetric(float64(writes)/float64(b.N), "writes/block")
		})
	}
}

// BenchmarkProbePickup measures how many draws it takes for a PROBE executor
// to be picked at 1,000 members of weight 100: offered at the healthy
// members' average weight (the rule here) and at weight 1 (the seed's
// rule). It replays the lottery over the pool that selection builds, with
// consecutive seeds, and reports the mean draws until the probe is drawn.
func BenchmarkProbePickup(b *testing.B) {
	k, ctx, _ := benchNetwork(b, 1000, func(k keeper.Keeper, ctx sdk.Context, addrs []sdk.AccAddress) {
		s, err := ac.BytesToString(addrs[500])
		require.NoError(b, err)
		require.NoError(b, k.Breaker().Restore(ctx, types.ExecutorHealth{
			Address: s, State: types.HEALTH_STATE_PROBE, ExcludedAt: 1, CooldownBlocks: 50, Exclusions: 1,
		}))
	})
	sel, err := k.Candidates(ctx, "m", 2)
	require.NoError(b, err)
	weights := make([]uint64, len(sel.Pool))
	probe := -1
	for i, c := range sel.Pool {
		weights[i] = c.Weight
		if c.Probe {
			probe = i
		}
	}
	require.GreaterOrEqual(b, probe, 0, "the probe is offered")
	for _, rule := range []struct {
		name   string
		weight uint64
	}{{"average-weight", weights[probe]}, {"weight-1", 1}} {
		b.Run(rule.name, func(b *testing.B) {
			w := slices.Clone(weights)
			w[probe] = rule.weight
			seed, draws, picks := uint64(0), 0, 0
			for b.Loop() {
				for {
					seed++
					draws++
					i, err := lottery.Draw(w, seed)
					require.NoError(b, err)
					if i == probe {
						picks++
						break
					}
				}
			}
			b.ReportMetric(float64(draws)/float64(picks), "draws-to-probe")
		})
	}
}
