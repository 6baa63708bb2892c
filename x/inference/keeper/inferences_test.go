package keeper_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	sdkerrors "github.com/cosmos/cosmos-sdk/types/errors"

	"github.com/inferenced/inferenced/x/inference/inferences"
	"github.com/inferenced/inferenced/x/inference/types"
)

// inferenceFixture: 1 and 2 serve "m" (1 also "x"), 3 serves "m" but is
// not poc_available. Block 1 opens epoch 1; its PoC phase is blocks 1..5.
func inferenceFixture(t *testing.T) *fixture {
	f := newFixture(t, withParticipants(gp(1, 10, true, "m", "x"), gp(2, 10, true, "m"), gp(3, 10, false, "m")))
	f.begin(1)
	return f
}

func TestStartInferenceRecordsStartedAndQueuesExpiry(t *testing.T) {
	f := inferenceFixture(t)
	f.advanceTo(8)
	exp := f.mustStart("inf-1", 1, "m")
	require.Equal(t, int64(8+testExpiration), exp)
	require.Equal(t, types.Inference{
		InferenceId: "inf-1", Model: "m", TransferAgent: bech(agentByte), Executor: bech(1), PromptHash: "cHJvbXB0",
		Status: types.INFERENCE_STATUS_STARTED, EpochIndex: 1, StartHeight: 8, ExpirationHeight: 8 + testExpiration,
	}, f.inference("inf-1"))
	require.True(t, f.hasIndexEntry(types.ExpiryQueuePrefix, 8+testExpiration, "inf-1", addr(agentByte)))
	evs := typedEvents[*types.EventInferenceStarted](t, f.ctx)
	require.Len(t, evs, 1)
	require.Equal(t, int64(8+testExpiration), evs[0].ExpirationHeight)
}

func TestStartInferenceRefusesUnroutableExecutor(t *testing.T) {
	cases := []struct {
		name     string
		height   int64
		executor byte
		model    string
		setup    func(f *fixture)
	}{
		{"unknown executor", 8, 9, "m", nil},
		{"registered but not in the epoch group", 8, 4, "m", func(f *fixture) { require.NoError(f.t, f.register(4, 1, true, "m")) }},
		{"model not served by executor", 8, 2, "x", nil},
		{"model served by nobody", 8, 1, "nobody", nil},
		{"inactive executor", 8, 1, "m", func(f *fixture) { f.setStatus(1, types.PARTICIPANT_STATUS_INACTIVE) }},
		{"invalid executor", 8, 1, "m", func(f *fixture) { f.setStatus(1, types.PARTICIPANT_STATUS_INVALID) }},
		{"not poc_available during PoC phase", 1 + testPocBlocks - 1, 3, "m", nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := inferenceFixture(t)
			f.advanceTo(tc.height)
			if tc.setup != nil {
				tc.setup(f)
			}
			_, err := f.start("inf-1", tc.executor, tc.model)
			require.ErrorIs(t, err, types.ErrExecutorNotRoutable)
			has, err := f.k.Inferences().Has(f.ctx, inferences.NewKey(addr(agentByte), "inf-1"))
			require.NoError(t, err)
			require.False(t, has)
		})
	}
}

func TestStartInferencePocPhaseAdmitsOnlyPocAvailable(t *testing.T) {
	f := inferenceFixture(t)
	f.mustStart("poc-1", 1, "m") // height 1: PoC phase
	_, err := f.start("poc-3", 3, "m")
	require.ErrorIs(t, err, types.ErrExecutorNotRoutable)
	f.advanceTo(1 + testPocBlocks) // first block after the PoC phase
	f.mustStart("after-3", 3, "m")
}

func TestStartInferenceRejectsDuplicateID(t *testing.T) {
	f := inferenceFixture(t)
	f.mustStart("dup", 1, "m")
	_, err := f.start("dup", 2, "m")
	require.ErrorIs(t, err, types.ErrInferenceExists)
	require.Equal(t, bech(1), f.inference("dup").Executor)
	require.NoError(t, f.finish(1, "dup"))
	_, err = f.start("dup", 1, "m")
	require.ErrorIs(t, err, types.ErrInferenceExists, "a closed id the store retains cannot be reused")
}

func TestStartInferenceRejectsMalformedInput(t *testing.T) {
	cases := []struct {
		name, creator, executor, id, model, prompt string
		wantErr                                    error
	}{
		{"empty id", bech(agentByte), bech(1), "", "m", "", types.ErrInvalidInference},
		{"id too long", bech(agentByte), bech(1), strings.Repeat("i", types.MaxInferenceIDLength+1), "m", "", types.ErrInvalidInference},
		{"id with slash", bech(agentByte), bech(1), "a/b", "m", "", types.ErrInvalidInference},
		{"id with newline", bech(agentByte), bech(1), "a\nb", "m", "", types.ErrInvalidInference},
		{"empty model", bech(agentByte), bech(1), "ok", "", "", types.ErrInvalidInference},
		{"model with space", bech(agentByte), bech(1), "ok", "m m", "", types.ErrInvalidInference},
		{"prompt hash too long", bech(agentByte), bech(1), "ok", "m", strings.Repeat("a", types.MaxHashLength+1), types.ErrInvalidInference},
		{"prompt hash bad chars", bech(agentByte), bech(1), "ok", "m", "zz zz", types.ErrInvalidInference},
		{"bad creator", "x", bech(1), "ok", "m", "", sdkerrors.ErrInvalidAddress},
		{"bad executor", bech(agentByte), "infer1bad", "ok", "m", "", sdkerrors.ErrInvalidAddress},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := inferenceFixture(t)
			_, err := f.msg.StartInference(f.ctx, &types.MsgStartInference{
				Creator: tc.creator, Executor: tc.executor, InferenceId: tc.id, Model: tc.model, PromptHash: tc.prompt,
			})
			require.ErrorIs(t, err, tc.wantErr)
			infs, _ := storedInferencesOf(t, f.ctx, *f.k)
			require.Empty(t, infs)
		})
	}
}

func TestFinishInferenceByExecutorCountsAndDequeues(t *testing.T) {
	f := inferenceFixture(t)
	exp := f.mustStart("inf-1", 1, "m")
	f.advanceTo(4)
	require.NoError(t, f.finish(1, "inf-1"))
	inf := f.inference("inf-1")
	require.Equal(t, types.INFERENCE_STATUS_FINISHED, inf.Status)
	require.Equal(t, int64(4), inf.EndHeight)
	require.Equal(t, "cmVzcG9uc2U=", inf.ResponseHash)
	require.Equal(t, types.CurrentEpochStats{InferenceCount: 1}, f.participant(1).CurrentEpochStats)
	require.False(t, f.hasIndexEntry(types.ExpiryQueuePrefix, exp, "inf-1", addr(agentByte)))
	require.Len(t, typedEvents[*types.EventInferenceFinished](t, f.ctx), 1)
	require.Equal(t, []string{"inf-1"}, f.finished())
}

func TestFinishInferenceRefusals(t *testing.T) {
	cases := []struct {
		name    string
		prepare func(f *fixture) // starts "inf-1" on executor 1 at height 1 first
		signer  byte
		id      string
		wantErr error
	}{
		{"wrong signer (another member)", nil, 2, "inf-1", types.ErrNotExecutor},
		{"wrong signer (the transfer agent)", nil, agentByte, "inf-1", types.ErrNotExecutor},
		{"double finish", func(f *fixture) { require.NoError(f.t, f.finish(1, "inf-1")) }, 1, "inf-1", types.ErrInferenceNotStarted},
		{"finish after expiry", func(f *fixture) { f.advanceTo(1 + testExpiration) }, 1, "inf-1", types.ErrInferenceNotStarted},
		{"unknown id", nil, 1, "nope", types.ErrInferenceNotFound},
		{"malformed id", nil, 1, "bad id", types.ErrInvalidInference},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := inferenceFixture(t)
			f.mustStart("inf-1", 1, "m")
			if tc.prepare != nil {
				tc.prepare(f)
			}
			before := f.participant(1).CurrentEpochStats
			statusBefore := f.inference("inf-1").Status
			require.ErrorIs(t, f.finish(tc.signer, tc.id), tc.wantErr)
			require.Equal(t, before, f.participant(1).CurrentEpochStats, "stats must not move on a refused finish")
			require.Equal(t, statusBefore, f.inference("inf-1").Status)
		})
	}
}

func TestFinishInferenceRejectsBadResponseHash(t *testing.T) {
	f := inferenceFixture(t)
	f.mustStart("inf-1", 1, "m")
	for _, h := range []string{strings.Repeat("a", types.MaxHashLength+1), "<script>", "a b"} {
		_, err := f.msg.FinishInference(f.ctx, &types.MsgFinishInference{Creator: bech(1), InferenceId: "inf-1", ResponseHash: h})
		require.ErrorIs(t, err, types.ErrInvalidInference, "hash %q", h)
	}
	require.Equal(t, types.INFERENCE_STATUS_STARTED, f.inference("inf-1").Status)
}

func TestEndBlockExpiresExactlyTheDueEntries(t *testing.T) {
	f := inferenceFixture(t)
	f.advanceTo(5)
	f.begin(6)
	f.mustStart("early-a", 1, "m") // due 16
	f.mustStart("early-b", 2, "m") // due 16
	f.end()
	f.begin(7)
	f.mustStart("late", 1, "m") // due 17
	f.end()
	f.advanceTo(15)
	for _, id := range []string{"early-a", "early-b", "late"} {
		require.Equal(t, types.INFERENCE_STATUS_STARTED, f.inference(id).Status, "%s before its height", id)
	}

	f.block(16)
	require.Equal(t, types.INFERENCE_STATUS_EXPIRED, f.inference("early-a").Status)
	require.Equal(t, types.INFERENCE_STATUS_EXPIRED, f.inference("early-b").Status)
	require.Equal(t, int64(16), f.inference("early-a").EndHeight)
	require.Equal(t, types.INFERENCE_STATUS_STARTED, f.inference("late").Status, "due later, must stay STARTED")
	require.Len(t, typedEvents[*types.EventInferenceExpired](t, f.ctx), 2)

	// One agent's misses are held by the breaker's evidence ledger, not
	// counted (the next block's step applies them).
	f.block(17)
	require.Equal(t, types.INFERENCE_STATUS_EXPIRED, f.inference("late").Status)
	require.Equal(t, []string{"early-a", "early-b", "late"}, f.expired())
	requireQueueEmpty(t, f)
	f.block(18)
	require.Equal(t, uint32(2), f.health(1).HeldMisses)
	require.Equal(t, uint32(1), f.health(2).HeldMisses)

	f.advanceTo(30)
	require.Equal(t, uint32(2), f.health(1).HeldMisses, "expired once only")
	require.Equal(t, types.CurrentEpochStats{}, f.participant(1).CurrentEpochStats, "uncorroborated misses do not count")
}

func TestFinishInExpirationBlockBeforeEndBlockWinsOverExpiry(t *testing.T) {
	f := inferenceFixture(t)
	exp := f.mustStart("inf-1", 1, "m")
	f.end()
	f.advanceTo(exp - 1)
	f.begin(exp)
	require.NoError(t, f.finish(1, "inf-1"))
	f.end()
	inf := f.inference("inf-1")
	require.Equal(t, types.INFERENCE_STATUS_FINISHED, inf.Status)
	require.Equal(t, exp, inf.EndHeight)
	require.Equal(t, types.CurrentEpochStats{InferenceCount: 1}, f.participant(1).CurrentEpochStats)
	require.Empty(t, typedEvents[*types.EventInferenceExpired](t, f.ctx))
	require.Empty(t, f.expired())
	requireQueueEmpty(t, f)
}

func TestInferenceIsClosedOnceNeverBoth(t *testing.T) {
	f := inferenceFixture(t)
	for _, id := range []string{"a", "b", "c", "d"} {
		f.mustStart(id, 1, "m")
	}
	require.NoError(t, f.finish(1, "a"))
	require.NoError(t, f.finish(1, "c"))
	f.advanceTo(1 + testExpiration + 5)
	require.ErrorIs(t, f.finish(1, "b"), types.ErrInferenceNotStarted)
	require.ErrorIs(t, f.finish(1, "a"), types.ErrInferenceNotStarted)
	require.Equal(t, []string{"a", "c"}, f.finished())
	require.Equal(t, []string{"b", "d"}, f.expired())
	require.Equal(t, types.CurrentEpochStats{InferenceCount: 2}, f.participant(1).CurrentEpochStats, "one agent's misses are held, not counted")
	require.Equal(t, uint32(2), f.health(1).HeldMisses)
	requireQueueEmpty(t, f)
}

func requireQueueEmpty(t *testing.T, f *fixture) {
	t.Helper()
	require.Empty(t, indexEntries(t, f.ctx, *f.k, types.ExpiryQueuePrefix))
}

// An outcome counts in the epoch where it happens, even for an inference
// started before the boundary; otherwise an executor could ignore every
// request of an epoch's last blocks without a miss on record.
func TestOutcomeOfPreviousEpochInferenceCountsInTheEpochItHappens(t *testing.T) {
	trusting := testParams()
	trusting.HealthCbTrafficMinAgents = 1 // the miss counts in the block after it
	f := newFixture(t, withParams(trusting), withParticipants(gp(1, 10, true, "m"), gp(2, 10, true, "m")))
	f.begin(1)
	f.end()
	f.advanceTo(testEpochLength - 2)
	f.begin(testEpochLength - 1)
	f.mustStart("old-miss", 1, "m")
	f.mustStart("old-finish", 2, "m")
	f.end()
	f.advanceTo(testEpochLength + 1) // epoch 2 starts at 1 + testEpochLength
	require.Equal(t, uint64(2), mustEpoch(t, f).Index)
	require.NoError(t, f.finish(2, "old-finish"))
	f.advanceTo(testEpochLength + testExpiration)

	require.Equal(t, types.INFERENCE_STATUS_EXPIRED, f.inference("old-miss").Status)
	require.Equal(t, types.CurrentEpochStats{MissedRequests: 1}, f.participant(1).CurrentEpochStats)
	require.Equal(t, types.CurrentEpochStats{InferenceCount: 1}, f.participant(2).CurrentEpochStats)
}
