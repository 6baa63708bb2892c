package keeper_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/inferenced/inferenced/x/inference/keeper"
	"github.com/inferenced/inferenced/x/inference/types"
)

// migrationHeight is the upgrade block of the version-3 store below.
const migrationHeight = 300

// v3Store writes a version-3 store at migrationHeight: params without
// inference_retention_epochs, inferences keyed by id alone (an open one, a
// probe of another agent, closed ones recent and old) and a PROBE record
// whose probe names no agent.
func v3Store(t *testing.T) *fixture {
	t.Helper()
	f := newFixture(t, withParticipants(gp(1, 10, true, "m"), gp(2, 10, true, "m")))
	f.ctx = f.ctx.WithBlockHeight(migrationHeight)
	p := testParams()
	p.InferenceRetentionEpochs = 0
	require.NoError(t, f.k.Params.Set(f.ctx, p))
	m := keeper.NewMigrator(*f.k)
	inf := func(id string, agent, exec byte, status types.InferenceStatus, start, end int64) types.Inference {
		return types.Inference{
			InferenceId: id, Model: "m", TransferAgent: bech(agent), Executor: bech(exec), PromptHash: "cHJvbXB0",
			Status: status, EpochIndex: 1, StartHeight: start, ExpirationHeight: start + testExpiration, EndHeight: end,
		}
	}
	for _, i := range []types.Inference{
		inf("open", agentByte, 1, types.INFERENCE_STATUS_STARTED, 296, 0),
		inf("probe-1", secondAgentByte, 2, types.INFERENCE_STATUS_STARTED, 299, 0),
		inf("fin-old", agentByte, 1, types.INFERENCE_STATUS_FINISHED, 95, 100),          // prune height 200: due
		inf("exp-edge", secondAgentByte, 1, types.INFERENCE_STATUS_EXPIRED, 190, 200),   // prune height 300: due now
		inf("fin-recent", agentByte, 2, types.INFERENCE_STATUS_FINISHED, 248, 250),      // 350
		inf("exp-recent", secondAgentByte, 1, types.INFERENCE_STATUS_EXPIRED, 251, 261), // 361
	} {
		require.NoError(t, m.SetV3Inference(f.ctx, i))
	}
	require.NoError(t, f.k.RestoreHealth(f.ctx, types.ExecutorHealth{
		Address: bech(2), State: types.HEALTH_STATE_PROBE, ExcludedAt: 280, SinceHeight: 298, CooldownBlocks: 8, Exclusions: 1,
		ProbeInferenceId: "probe-1",
	}))
	return f
}

// A version-3 store is re-keyed by (agent, id), its closed inferences are
// indexed for pruning (those already due deleted), its probe gets its
// agent, and the chain then prunes and expires on the new keys.
func TestMigrate3to4RekeysPrunesAndAttributesProbes(t *testing.T) {
	f := v3Store(t)
	require.NoError(t, keeper.NewMigrator(*f.k).Migrate3to4(f.ctx))

	p, err := f.k.Params.Get(f.ctx)
	require.NoError(t, err)
	require.Equal(t, types.DefaultInferenceRetentionEpochs, p.InferenceRetentionEpochs)
	retention := int64(types.DefaultInferenceRetentionEpochs) * testEpochLength

	var got []string
	require.NoError(t, f.k.Inferences.Walk(f.ctx, nil, func(k keeper.InferenceKey, inf types.Inference) (bool, error) {
		require.Equal(t, bech(byteOf(k.K1())), inf.TransferAgent, "keyed by its own agent")
		require.Equal(t, k.K2(), inf.InferenceId)
		got = append(got, inf.InferenceId)
		return false, nil
	}))
	require.ElementsMatch(t, []string{"open", "probe-1", "fin-recent", "exp-recent"}, got, "the due closed ones are deleted")
	requireIndexesMatch(t, f, retention, "after the migration")
	at, _ := f.prunedAt(agentByte, "fin-recent")
	require.Equal(t, int64(250)+retention, at)

	last, err := f.k.PrunedThrough.Get(f.ctx)
	require.NoError(t, err)
	require.Equal(t, int64(migrationHeight), last)
	_, err = f.k.Inference(f.ctx, addr(agentByte), "fin-old")
	require.ErrorContains(t, err, "not retained: inferences closed before height 201")

	h := f.health(2)
	require.Equal(t, [2]string{"probe-1", bech(secondAgentByte)}, [2]string{h.ProbeInferenceId, h.ProbeAgent})

	// The chain runs on: the open inference expires at 306, fin-recent is
	// pruned at 350.
	f.height = migrationHeight
	f.advanceTo(350)
	require.Equal(t, types.INFERENCE_STATUS_EXPIRED, f.inference("open").Status)
	require.False(t, f.retained(agentByte, "fin-recent"))
	require.True(t, f.retained(secondAgentByte, "exp-recent"))
}

// byteOf is the byte a test address repeats.
func byteOf(a []byte) byte { return a[0] }

// The migration is all or nothing: a version-3 store it cannot re-key (an
// inference whose agent is no address, an expiry entry that names no
// STARTED inference) fails with the reason, and in the upgrade's cache
// context nothing it wrote reaches the store.
func TestMigrate3to4RefusesAStoreItCannotRekey(t *testing.T) {
	cases := []struct {
		name    string
		corrupt func(f *fixture)
		mention string
	}{
		{"agent is no address", func(f *fixture) {
			require.NoError(t, keeper.NewMigrator(*f.k).SetV3Inference(f.ctx, types.Inference{
				InferenceId: "bad-agent", TransferAgent: "nobody", Executor: bech(1), Status: types.INFERENCE_STATUS_FINISHED,
				StartHeight: 1, ExpirationHeight: 11, EndHeight: 290,
			}))
		}, `transfer agent "nobody"`},
		{"expiry entry of a closed inference", func(f *fixture) {
			require.NoError(t, keeper.NewMigrator(*f.k).SetV3Expiry(f.ctx, 271, "exp-recent"))
		}, "does not match its inference"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := v3Store(t)
			tc.corrupt(f)
			upgrade, _ := f.ctx.CacheContext() // never written, as a failed upgrade's
			err := keeper.NewMigrator(*f.k).Migrate3to4(upgrade)
			require.ErrorContains(t, err, tc.mention)
			p, err := f.k.Params.Get(f.ctx)
			require.NoError(t, err)
			require.Zero(t, p.InferenceRetentionEpochs, "the store is as version 3 left it")
			require.Empty(t, f.health(2).ProbeAgent)
		})
	}
}
