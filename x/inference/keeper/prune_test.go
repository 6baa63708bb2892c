package keeper_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/inferenced/inferenced/x/inference/inferences"
	"github.com/inferenced/inferenced/x/inference/types"
)

// pruneParams keep closed inferences retention epochs of testEpochLength.
func pruneParams(retention uint64) types.Params {
	p := testParams()
	p.InferenceRetentionEpochs = retention
	return p
}

// pruneFixture: executors 1 and 2 serve "m"; block 1 has run whole.
func pruneFixture(t *testing.T, retention uint64) *fixture {
	t.Helper()
	f := newFixture(t, withParams(pruneParams(retention)), withParticipants(gp(1, 10, true, "m"), gp(2, 10, true, "m")))
	f.block(1)
	return f
}

// prunedAt is the prune index height of agent's id, if indexed.
func (f *fixture) prunedAt(agent byte, id string) (int64, bool) {
	f.t.Helper()
	for _, k := range indexEntries(f.t, f.ctx, *f.k, types.PruneIndexPrefix) {
		if k.K2() == id && k.K3().Equals(addr(agent)) {
			return k.K1(), true
		}
	}
	return 0, false
}

func (f *fixture) retained(agent byte, id string) bool {
	f.t.Helper()
	has, err := f.k.Inferences().Has(f.ctx, inferences.NewKey(addr(agent), id))
	require.NoError(f.t, err)
	return has
}

// A closed inference is kept through the block before its prune height
// (end height + retention x epoch_length) and deleted by the EndBlock of
// that height, with its index entry; a query then says why it is missing.
func TestPruneExactlyAtTheBoundary(t *testing.T) {
	cases := []struct {
		name    string
		finish  bool
		wantEnd int64
	}{
		{"finished", true, 2},
		{"expired", false, 2 + testExpiration},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := pruneFixture(t, 1)
			f.begin(2)
			f.mustStart("p", 1, "m")
			if tc.finish {
				require.NoError(t, f.finish(1, "p"))
			}
			f.end()
			f.advanceTo(tc.wantEnd)
			require.Equal(t, tc.wantEnd, f.inference("p").EndHeight)
			prune := tc.wantEnd + testEpochLength
			at, ok := f.prunedAt(agentByte, "p")
			require.True(t, ok)
			require.Equal(t, prune, at)

			f.advanceTo(prune - 1)
			require.True(t, f.retained(agentByte, "p"), "present at prune height - 1")
			f.begin(prune)
			require.True(t, f.retained(agentByte, "p"), "present until the EndBlock of the prune height")
			f.end()
			require.False(t, f.retained(agentByte, "p"), "gone at the prune height")
			_, ok = f.prunedAt(agentByte, "p")
			require.False(t, ok, "its index entry goes with it")
			_, last := storedInferencesOf(t, f.ctx, *f.k)
			require.Equal(t, prune, last)

			_, err := f.query.Inference(f.ctx, &types.QueryInferenceRequest{InferenceId: "p", TransferAgent: bech(agentByte)})
			require.Equal(t, codes.NotFound, status.Code(err))
			require.ErrorContains(t, err, fmt.Sprintf(
				"never started, or not retained: inferences closed before about height %d are pruned (inference_retention_epochs = 1,", tc.wantEnd+1))
			require.ErrorIs(t, f.finish(1, "p"), types.ErrInferenceNotFound, "a pruned inference cannot be finished")
		})
	}
}

// A stale prune entry that names a running inference (unreachable: an id
// is reused only once its inference and entry are gone) neither deletes it
// nor fails the block: only the entry goes.
func TestPruneKeepsAStartedInferenceAStaleEntryNames(t *testing.T) {
	f := pruneFixture(t, 1)
	f.begin(2)
	f.mustStart("running", 1, "m")
	setIndexEntry(t, f.ctx, *f.k, types.PruneIndexPrefix, inferences.NewHeightKey(2, inferences.NewKey(addr(agentByte), "running")))
	f.end()
	require.True(t, f.retained(agentByte, "running"))
	require.Equal(t, types.INFERENCE_STATUS_STARTED, f.inference("running").Status)
	_, ok := f.prunedAt(agentByte, "running")
	require.False(t, ok, "the stale entry is dropped")
}

// A block with nothing due writes nothing for pruning: no last-pruned
// height appears before the first prune.
func TestPruneWritesNothingWhenNothingIsDue(t *testing.T) {
	f := pruneFixture(t, 1)
	f.begin(2)
	f.mustStart("p", 1, "m")
	require.NoError(t, f.finish(1, "p"))
	f.end()
	f.advanceTo(2 + testEpochLength - 1)
	_, last := storedInferencesOf(t, f.ctx, *f.k)
	require.Zero(t, last, "nothing pruned yet")
	_, err := f.k.Inference(f.ctx, addr(agentByte), "never")
	require.ErrorContains(t, err, "never started (no inference has been pruned yet)")
}

// The prune height is fixed when the inference closes, with that block's
// params: a later governance change applies to what closes after it, so
// it never makes a backlog due at once.
func TestPruneHeightIsFixedAtClose(t *testing.T) {
	f := pruneFixture(t, 1)
	f.begin(2)
	f.mustStart("before", 1, "m")
	require.NoError(t, f.finish(1, "before"))
	f.end()
	require.NoError(t, f.k.SetParams(f.ctx, pruneParams(3)))
	f.begin(3)
	f.mustStart("after", 1, "m")
	require.NoError(t, f.finish(1, "after"))
	f.end()
	at, _ := f.prunedAt(agentByte, "before")
	require.Equal(t, int64(2+testEpochLength), at)
	at, _ = f.prunedAt(agentByte, "after")
	require.Equal(t, int64(3+3*testEpochLength), at)
	f.advanceTo(2 + testEpochLength)
	require.False(t, f.retained(agentByte, "before"))
	require.True(t, f.retained(agentByte, "after"))
}

// Replayed id after pruning: while the closed inference is retained its
// agent cannot start the id again; once it is pruned the agent may, and
// the new inference is a fresh one (its own heights, STARTED), counted
// once when it finishes. Another agent could always use the id.
func TestReplayedIDAfterPruningIsAFreshInference(t *testing.T) {
	f := pruneFixture(t, 1)
	f.begin(2)
	f.mustStart("r", 1, "m")
	require.NoError(t, f.finish(1, "r"))
	f.end()
	f.begin(3)
	_, err := f.start("r", 1, "m")
	require.ErrorIs(t, err, types.ErrInferenceExists, "retained: the id is still taken")
	f.end()

	prune := int64(2 + testEpochLength)
	f.advanceTo(prune)
	require.False(t, f.retained(agentByte, "r"))
	f.begin(prune + 1) // epoch 2 (started at 1 + testEpochLength)
	exp := f.mustStart("r", 1, "m")
	inf := f.inference("r")
	require.Equal(t, types.INFERENCE_STATUS_STARTED, inf.Status)
	require.Equal(t, prune+1, inf.StartHeight)
	require.Equal(t, prune+1+testExpiration, exp)
	require.Zero(t, inf.EndHeight)
	require.Empty(t, inf.ResponseHash)
	_, indexed := f.prunedAt(agentByte, "r")
	require.False(t, indexed, "a STARTED inference is not in the prune index")
	require.Zero(t, f.participant(1).CurrentEpochStats.InferenceCount)

	require.NoError(t, f.finish(1, "r"))
	require.Equal(t, uint64(1), f.participant(1).CurrentEpochStats.InferenceCount, "counted once")
	require.Equal(t, uint64(1), f.agent(agentByte).Standing.Finished)
	at, _ := f.prunedAt(agentByte, "r")
	require.Equal(t, prune+1+testEpochLength, at, "and pruned on its own schedule")
	f.end()
}
