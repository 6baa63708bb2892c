package keeper_test

import (
	"strings"
	"testing"

	"github.com/inferenced/inferenced/x/inference/testutil/testkit"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/inferenced/inferenced/x/inference/inferences"
	"github.com/inferenced/inferenced/x/inference/types"
)

// weighted: members 1..4 serve "m" with weights 1..4, all poc_available.
func weighted(t *testing.T, opts ...option) *fixture {
	opts = append(opts, withParticipants(gp(1, 1, true, "m"), gp(2, 2, true, "m"), gp(3, 3, true, "m"), gp(4, 4, true, "m")))
	f := newFixture(t, opts...)
	f.begin(1)
	f.advanceTo(1 + testPocBlocks)
	return f
}

// counts draws seeds [0, n) and counts the winners by address.
func counts(t *testing.T, f *fixture, model string, n uint64) map[string]int {
	t.Helper()
	out := map[string]int{}
	for seed := uint64(0); seed < n; seed++ {
		resp, err := f.draw(model, seed)
		require.NoError(t, err)
		out[resp.Executor.Address]++
	}
	return out
}

func TestRandomExecutorIsReproducibleForASeed(t *testing.T) {
	a, b := weighted(t), weighted(t)
	differs := false
	for seed := uint64(0); seed < 64; seed++ {
		r1, err := a.draw("m", seed)
		require.NoError(t, err)
		r2, err := a.draw("m", seed)
		require.NoError(t, err)
		r3, err := b.draw("m", seed)
		require.NoError(t, err)
		require.Equal(t, r1, r2, "same keeper, same seed %d", seed)
		require.Equal(t, r1, r3, "same state on another keeper, seed %d", seed)
		require.Equal(t, uint32(4), r1.Candidates)
		require.Equal(t, uint64(10), r1.TotalWeight)
		if seed > 0 {
			prev, _ := a.draw("m", seed-1)
			differs = differs || prev.Executor.Address != r1.Executor.Address
		}
	}
	require.True(t, differs, "the seed must matter")
}

func TestRandomExecutorFollowsWeights(t *testing.T) {
	f := weighted(t)
	const n = 10000
	got := counts(t, f, "m", n)
	for i := byte(1); i <= 4; i++ {
		testkit.RequireNear(t, got[bech(i)], n, float64(i)/10, bech(i))
	}
}

func TestRandomExecutorFilterChainModelStatusPoc(t *testing.T) {
	// 1: serves m, poc. 2: serves m, not poc. 3: serves other only. 4: serves m, goes INACTIVE.
	f := newFixture(t, withParticipants(gp(1, 5, true, "m"), gp(2, 5, false, "m"), gp(3, 5, true, "other"), gp(4, 5, true, "m")))
	f.begin(1)
	f.setStatus(4, types.PARTICIPANT_STATUS_INACTIVE)

	inPoc := counts(t, f, "m", 200)
	require.Equal(t, map[string]int{bech(1): 200}, inPoc, "PoC phase: only poc_available, active, serving members")
	sel, err := f.k.Candidates(f.ctx, "m", f.height)
	require.NoError(t, err)
	require.Len(t, sel.Pool, 1)

	f.advanceTo(1 + testPocBlocks)
	after := counts(t, f, "m", 400)
	require.Len(t, after, 2)
	require.Positive(t, after[bech(1)])
	require.Positive(t, after[bech(2)])
	require.Equal(t, map[string]int{bech(3): 50}, counts(t, f, "other", 50))
}

func TestRandomExecutorZeroTotalWeightIsFailedPrecondition(t *testing.T) {
	f := newFixture(t, withParticipants(gp(1, 0, true, "m"), gp(2, 0, true, "m"), gp(3, 7, true, "x")))
	f.begin(1)
	require.NotPanics(t, func() {
		_, err := f.draw("m", 1)
		require.Equal(t, codes.FailedPrecondition, status.Code(err), "err: %v", err)
		require.ErrorContains(t, err, "positive weight")
	})
}

func TestRandomExecutorErrors(t *testing.T) {
	f := newFixture(t, withParticipants(gp(1, 1, true, "m")))
	_, err := f.draw("m", 1)
	require.Equal(t, codes.NotFound, status.Code(err), "before the first epoch: %v", err)

	f.begin(1)
	_, err = f.draw("unknown-model", 1)
	require.Equal(t, codes.FailedPrecondition, status.Code(err))
	require.ErrorContains(t, err, "unknown-model")
	for _, bad := range []string{"", "has space", strings.Repeat("m", types.MaxModelLength+1)} {
		_, err = f.draw(bad, 1)
		require.Equal(t, codes.InvalidArgument, status.Code(err), "model %q", bad)
	}
	_, err = f.query.GetRandomExecutor(f.ctx, nil)
	require.Equal(t, codes.InvalidArgument, status.Code(err))
}

// The breaker's refusal of a start (an executor excluded before the
// previous block) is enforced by StartInference: nothing is stored.
func TestHealthStageCheckStartRefusalIsEnforcedByStartInference(t *testing.T) {
	f := weighted(t)
	require.NoError(t, f.k.Breaker().Restore(f.ctx, types.ExecutorHealth{
		Address: bech(2), State: types.HEALTH_STATE_EXCLUDED, ExcludedAt: f.height - 2, CooldownBlocks: 50, Exclusions: 1,
	}))
	_, err := f.start("inf-2", 2, "m")
	require.ErrorIs(t, err, types.ErrExecutorNotRoutable)
	require.ErrorContains(t, err, "excluded by the circuit breaker")
	has, err := f.k.Inferences().Has(f.ctx, inferences.NewKey(addr(agentByte), "inf-2"))
	require.NoError(t, err)
	require.False(t, has)
	f.mustStart("inf-1", 1, "m")
	require.NoError(t, f.k.CheckRoutable(f.ctx, addr(3), "m"))
}

func TestCandidatesShareAdmissionWithCheckRoutable(t *testing.T) {
	f := newFixture(t, withParticipants(gp(1, 5, true, "m"), gp(2, 5, false, "m"), gp(3, 5, true, "other"), gp(4, 5, true, "m")))
	f.begin(1)
	f.setStatus(4, types.PARTICIPANT_STATUS_INACTIVE)
	for _, h := range []int64{1, 1 + testPocBlocks} {
		f.advanceTo(h)
		sel, err := f.k.Candidates(f.ctx, "m", f.height)
		require.NoError(t, err)
		in := map[string]bool{}
		for _, c := range sel.Pool {
			in[c.Member.Address] = true
		}
		for i := byte(1); i <= 4; i++ {
			err := f.k.CheckRoutable(f.ctx, addr(i), "m")
			require.Equal(t, in[bech(i)], err == nil, "height %d member %d: %v", h, i, err)
		}
	}
}

// A weight-0 member can never be drawn, so enforcement must not let a
// transfer agent route to it either (selection and enforcement agree).
func TestStartInferenceRefusesWeightZeroMember(t *testing.T) {
	f := newFixture(t, withParticipants(gp(1, 0, true, "m"), gp(2, 5, true, "m")))
	f.begin(1)
	_, err := f.start("to-zero", 1, "m")
	require.ErrorIs(t, err, types.ErrExecutorNotRoutable)
	require.ErrorContains(t, err, "weight 0")
	f.mustStart("to-two", 2, "m")
}

// A query reads the last committed block but the start it informs executes
// in the next one: at the last committed block before the PoC phase ends,
// selection must already offer the non-PoC executors that the start will
// accept, and never one the start would refuse.
func TestRandomExecutorEvaluatesStagesAtTheNextBlock(t *testing.T) {
	f := newFixture(t, withParticipants(gp(1, 10, true, "m"), gp(2, 1000, false, "m")))
	f.begin(1)
	// Blocks [1, 1+testPocBlocks) are the PoC phase. At committed height
	// testPocBlocks-1 the next block is still PoC: only executor 1 is offered.
	f.advanceTo(testPocBlocks - 1)
	for seed := uint64(0); seed < 50; seed++ {
		resp, err := f.draw("m", seed)
		require.NoError(t, err)
		require.Equal(t, bech(1), resp.Executor.Address, "the next block is in the PoC phase")
	}
	f.advanceTo(testPocBlocks) // the next block, 1+testPocBlocks, serves everyone
	seen := map[string]bool{}
	for seed := uint64(0); seed < 50; seed++ {
		resp, err := f.draw("m", seed)
		require.NoError(t, err)
		seen[resp.Executor.Address] = true
	}
	require.True(t, seen[bech(2)], "executor 2 serves from the next block on")
}
