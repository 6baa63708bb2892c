package keeper_test

import (
	"fmt"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/inferenced/inferenced/x/inference/inferences"
	"github.com/inferenced/inferenced/x/inference/types"
)

// trafficScript runs blocks from..to of two agents' traffic on executors 1
// and 2: each block both agents start one inference on each executor, and
// the executors finish some at once and leave the rest to expire. It
// returns every start's and finish's error, so two runs can be compared.
func trafficScript(f *fixture, from, to int64) []string {
	var out []string
	for h := from; h <= to; h++ {
		f.begin(h)
		for _, agent := range []byte{agentByte, secondAgentByte} {
			for _, exec := range []byte{1, 2} {
				id := fmt.Sprintf("t-%d-%d", h, exec)
				_, err := f.startAs(agent, id, exec, "m")
				out = append(out, fmt.Sprint(err))
				// Executor 1 misses a third of its traffic, executor 2 a fifth.
				if err == nil && (h+int64(agent))%map[byte]int64{1: 3, 2: 5}[exec] != 0 {
					out = append(out, fmt.Sprint(f.finishOf(exec, agent, id)))
				}
			}
		}
		f.end()
	}
	return out
}

// Pruning deletes closed inferences and nothing else: two chains with the
// same traffic, one pruning after one epoch and one keeping everything for
// the maximum retention, agree block by block on the participants' stats
// and statuses, the agents' standing and every byte the breaker holds.
func TestPruningLeavesStatsStandingAndBreakerAlone(t *testing.T) {
	pruning := pruneFixture(t, 1)
	keeping := pruneFixture(t, types.MaxInferenceRetentionEpochs)
	for h := int64(2); h <= 3*testEpochLength; h += 10 {
		require.Equal(t, trafficScript(keeping, h, h+9), trafficScript(pruning, h, h+9), "blocks %d-%d: the same starts and finishes succeed", h, h+9)
		require.Equal(t, keeping.participant(1), pruning.participant(1), "after block %d", h+9)
		require.Equal(t, keeping.participant(2), pruning.participant(2), "after block %d", h+9)
		require.Equal(t, keeping.agent(agentByte), pruning.agent(agentByte), "after block %d", h+9)
		require.Equal(t, keeping.agent(secondAgentByte), pruning.agent(secondAgentByte), "after block %d", h+9)
		require.Equal(t, keeping.census(), pruning.census(), "after block %d: breaker state", h+9)
	}
	kept, pruned := countInferences(t, keeping), countInferences(t, pruning)
	require.Greater(t, kept, 2*pruned, "the pruning chain did prune (%d kept, %d retained)", kept, pruned)
	require.NotZero(t, keeping.participant(1).CurrentEpochStats.InferenceCount, "the traffic counted")
}

func countInferences(t *testing.T, f *fixture) int {
	infs, _ := storedInferencesOf(t, f.ctx, *f.k)
	return len(infs)
}

// requireIndexesMatch checks the two index invariants: the expiry queue
// holds exactly the STARTED inferences at their expiration height, the
// prune index exactly the closed ones at end height + retention blocks.
func requireIndexesMatch(t *testing.T, f *fixture, retentionBlocks int64, when string) {
	t.Helper()
	require.NoError(t, f.k.Inferences().Invariants(f.ctx), when)
	want, wantExpiry := map[string]bool{}, map[string]bool{}
	infs, _ := storedInferencesOf(t, f.ctx, *f.k)
	for _, inf := range infs {
		k, err := f.k.Inferences().KeyOf(inf)
		require.NoError(t, err)
		if inf.Status == types.INFERENCE_STATUS_STARTED {
			wantExpiry[heightKeyString(inferences.NewHeightKey(inf.ExpirationHeight, k))] = true
		} else {
			want[heightKeyString(inferences.NewHeightKey(inf.EndHeight+retentionBlocks, k))] = true
		}
	}
	got, gotExpiry := map[string]bool{}, map[string]bool{}
	for _, k := range indexEntries(t, f.ctx, *f.k, types.PruneIndexPrefix) {
		got[heightKeyString(k)] = true
	}
	for _, k := range indexEntries(t, f.ctx, *f.k, types.ExpiryQueuePrefix) {
		gotExpiry[heightKeyString(k)] = true
	}
	require.Equal(t, want, got, "%s: prune index = closed inferences", when)
	require.Equal(t, wantExpiry, gotExpiry, "%s: expiry queue = STARTED inferences", when)
}

// heightKeyString spells an index entry (a Triple holds pointers, so it is
// no map key itself).
func heightKeyString(k inferences.HeightKey) string {
	return fmt.Sprintf("%d/%s/%x", k.K1(), k.K2(), k.K3())
}

// Property: over random sequences of starts (new ids and reused ones,
// by both agents), finishes (right and wrong executor and agent) and
// expiries, the prune index stays equal to the set of closed inferences
// and nothing retained is past its prune height.
func TestPruneIndexEqualsClosedInferences(t *testing.T) {
	for seed := int64(1); seed <= 8; seed++ {
		t.Run(fmt.Sprint("seed ", seed), func(t *testing.T) {
			rng := rand.New(rand.NewSource(seed))
			f := pruneFixture(t, 1)
			agents, execs := []byte{agentByte, secondAgentByte}, []byte{1, 2}
			for h := int64(2); h <= 4*testEpochLength; h++ {
				f.begin(h)
				for range rng.Intn(4) {
					id := fmt.Sprintf("id-%d", rng.Intn(40)) // a small id space: reuse is common
					_, _ = f.startAs(agents[rng.Intn(2)], id, execs[rng.Intn(2)], "m")
				}
				for range rng.Intn(4) {
					id := fmt.Sprintf("id-%d", rng.Intn(40))
					_ = f.finishOf(execs[rng.Intn(2)], agents[rng.Intn(2)], id)
				}
				f.end()
				requireIndexesMatch(t, f, testEpochLength, fmt.Sprintf("after block %d", h))
				infs, _ := storedInferencesOf(t, f.ctx, *f.k)
				for _, inf := range infs {
					require.False(t, inf.Status != types.INFERENCE_STATUS_STARTED && inf.EndHeight+testEpochLength <= h,
						"block %d: %q closed at %d is past its prune height", h, inf.InferenceId, inf.EndHeight)
				}
			}
			require.NotZero(t, countInferences(t, f))
		})
	}
}

// Genesis round trip with pruned history: the export holds only retained
// inferences and the last pruned height; the import rebuilds the prune
// index from them (end height + retention x epoch_length of the imported
// params), keeps saying why a pruned id is missing, and exports the same.
func TestGenesisRoundTripWithPrunedHistory(t *testing.T) {
	f := pruneFixture(t, 1)
	trafficScript(f, 2, 2*testEpochLength)
	require.False(t, f.retained(agentByte, "t-2-2"), "the first block's inferences are pruned")
	out, err := f.k.ExportGenesis(f.ctx)
	require.NoError(t, err)
	require.NoError(t, out.Validate(ac))
	require.Equal(t, countInferences(t, f), len(out.Inferences), "the export holds exactly the retained inferences")
	require.Equal(t, int64(2*testEpochLength), out.InferencesPrunedThrough)
	for _, inf := range out.Inferences {
		if inf.Status != types.INFERENCE_STATUS_STARTED {
			require.Greater(t, inf.EndHeight+testEpochLength, int64(2*testEpochLength), "%q is retained", inf.InferenceId)
		}
	}

	g := newFixture(t, withGenesis(*out))
	g.ctx = g.ctx.WithBlockHeight(f.height)
	requireIndexesMatch(t, g, testEpochLength, "after import")
	before := indexEntries(t, f.ctx, *f.k, types.PruneIndexPrefix)
	after := indexEntries(t, g.ctx, *g.k, types.PruneIndexPrefix)
	require.Equal(t, before, after, "the rebuilt prune index is the exported chain's")
	_, err = g.k.Inference(g.ctx, addr(agentByte), "t-2-2")
	require.ErrorIs(t, err, types.ErrInferenceNotFound)
	require.ErrorContains(t, err, "not retained: inferences closed before about height 51")

	again, err := g.k.ExportGenesis(g.ctx)
	require.NoError(t, err)
	require.Equal(t, out, again)
}
