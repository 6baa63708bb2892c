package keeper_test

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/cosmos/cosmos-sdk/store/v2/rootmulti"
	storetypes "github.com/cosmos/cosmos-sdk/store/v2/types"
	"github.com/stretchr/testify/require"

	sdk "github.com/cosmos/cosmos-sdk/types"

	"github.com/inferenced/inferenced/x/inference/testutil"
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
	m := newMigrator(*f.k)
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
	require.NoError(t, f.k.Breaker().Restore(f.ctx, types.ExecutorHealth{
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
	require.NoError(t, newMigrator(*f.k).Migrate3to4(f.ctx))

	p, err := f.k.Params.Get(f.ctx)
	require.NoError(t, err)
	require.Equal(t, types.DefaultInferenceRetentionEpochs, p.InferenceRetentionEpochs)
	retention := int64(types.DefaultInferenceRetentionEpochs) * testEpochLength

	var got []string
	infs, last := storedInferencesOf(t, f.ctx, *f.k)
	for _, inf := range infs {
		key, err := f.k.Inferences().KeyOf(inf)
		require.NoError(t, err)
		has, err := f.k.Inferences().Has(f.ctx, key)
		require.NoError(t, err)
		require.True(t, has, "%q keyed by its own agent and id", inf.InferenceId)
		got = append(got, inf.InferenceId)
	}
	require.ElementsMatch(t, []string{"open", "probe-1", "fin-recent", "exp-recent"}, got, "the due closed ones are deleted")
	requireIndexesMatch(t, f, retention, "after the migration")
	at, _ := f.prunedAt(agentByte, "fin-recent")
	require.Equal(t, int64(250)+retention, at)

	require.Equal(t, int64(migrationHeight), last)
	_, err = f.k.Inference(f.ctx, addr(agentByte), "fin-old")
	require.ErrorContains(t, err, "not retained: inferences closed before about height 201")

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

// moduleStore is the module's KV store under ctx.
func moduleStore(t testing.TB, cms storetypes.CommitMultiStore, ctx sdk.Context) storetypes.KVStore {
	t.Helper()
	rs, ok := cms.(*rootmulti.Store)
	require.True(t, ok)
	return ctx.KVStore(rs.StoreKeysByName()[types.StoreKey])
}

// dump is every key and value of the module store, in key order.
func (f *fixture) dump() [][2][]byte {
	f.t.Helper()
	it := moduleStore(f.t, f.cms, f.ctx).Iterator(nil, nil)
	defer func() { require.NoError(f.t, it.Close()) }()
	var out [][2][]byte
	for ; it.Valid(); it.Next() {
		out = append(out, [2][]byte{bytes.Clone(it.Key()), bytes.Clone(it.Value())})
	}
	return out
}

// setRawInference stores bz under the inferences prefix at key, byte for byte.
func (f *fixture) setRawInference(key string, bz []byte) {
	f.t.Helper()
	moduleStore(f.t, f.cms, f.ctx).Set(append(types.InferencesPrefix.Bytes(), key...), bz)
}

// The migration refuses a version-3 store it cannot finish before its
// first write, so even with no cache context to discard (x/upgrade gives
// it none: a failed upgrade block stops the node) the store stays byte for
// byte as version 3 wrote it. Each case is a store the validation pass
// refuses; the attack named is how such a store could arise or what
// finishing it anyway would do.
func TestMigrate3to4RefusesAStoreItCannotRekey(t *testing.T) {
	v3 := func(f *fixture, inf types.Inference) {
		require.NoError(t, newMigrator(*f.k).SetV3Inference(f.ctx, inf))
	}
	closed := func(id, agent string) types.Inference {
		return types.Inference{
			InferenceId: id, Model: "m", TransferAgent: agent, Executor: bech(1), Status: types.INFERENCE_STATUS_FINISHED,
			StartHeight: 280, ExpirationHeight: 290, EndHeight: 290,
		}
	}
	long, err := ac.BytesToString(bytes.Repeat([]byte{0xCD}, 45))
	require.NoError(t, err)
	cases := []struct {
		name    string
		corrupt func(f *fixture)
		mention string
	}{
		// A re-key half done leaves some inferences under neither layout.
		{"agent is no address", func(f *fixture) { v3(f, closed("bad-agent", "nobody")) }, `transfer agent "nobody"`},
		// A 45-byte agent's version-4 key sorts among the version-3 ids: the
		// batched walk would meet what it wrote and count it twice.
		{"agent address sorts among version-3 ids", func(f *fixture) { v3(f, closed("long-agent", long)) }, "45-byte address"},
		{"key is not its inference's id", func(f *fixture) {
			inf := closed("fin-alias", bech(agentByte))
			bz, err := inf.Marshal()
			require.NoError(t, err)
			f.setRawInference("alias", bz)
		}, `key "alias" holds inference "fin-alias"`},
		{"value does not decode", func(f *fixture) { f.setRawInference("garbled", []byte{0xFF, 0xFF, 0xFF}) }, "read version-3 inferences"},
		// A key no version-3 id can have would be left behind, unprunable.
		{"key below every version-3 id", func(f *fixture) {
			inf := closed("!bang", bech(agentByte))
			bz, err := inf.Marshal()
			require.NoError(t, err)
			f.setRawInference("!bang", bz)
		}, "sorts below every version-3 id"},
		// A closed inference queued for expiry would expire twice: its
		// executor charged a second miss.
		{"expiry entry of a closed inference", func(f *fixture) {
			require.NoError(t, newMigrator(*f.k).SetV3Expiry(f.ctx, 271, "exp-recent"))
		}, "does not match its inference"},
		{"expiry entry at the wrong height", func(f *fixture) {
			require.NoError(t, newMigrator(*f.k).SetV3Expiry(f.ctx, 400, "open"))
		}, "does not match its inference"},
		{"expiry entry of no inference", func(f *fixture) {
			require.NoError(t, newMigrator(*f.k).SetV3Expiry(f.ctx, 305, "ghost"))
		}, `expiry entry (305, "ghost")`},
		// A probe with no agent would hold the executor's probe slot for
		// the rest of the epoch.
		{"probe names no inference", func(f *fixture) {
			require.NoError(t, f.k.Breaker().Restore(f.ctx, types.ExecutorHealth{
				Address: bech(2), State: types.HEALTH_STATE_PROBE, ExcludedAt: 280, SinceHeight: 298, CooldownBlocks: 8, Exclusions: 1,
				ProbeInferenceId: "ghost",
			}))
		}, `probe inference "ghost"`},
		{"participant address does not decode", func(f *fixture) {
			q := gp(9, 10, true, "m")
			q.Address = "nobody"
			bz, err := q.Marshal()
			require.NoError(t, err)
			require.NoError(t, setRawParticipant(f.ctx, *f.k, addr(9), bz))
		}, `participant address "nobody"`},
		{"params invalid once filled", func(f *fixture) {
			p, err := f.k.Params.Get(f.ctx)
			require.NoError(t, err)
			p.EpochLength = 1
			require.NoError(t, f.k.Params.Set(f.ctx, p))
		}, "epoch_length"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := v3Store(t)
			tc.corrupt(f)
			before := f.dump()
			err := newMigrator(*f.k).Migrate3to4InBatches(f.ctx, 2)
			require.ErrorContains(t, err, tc.mention)
			require.Equal(t, before, f.dump(), "the refused store is byte for byte as version 3 left it")
		})
	}
}

// v3History writes n version-3 inferences at migrationHeight (ids
// inf-00000...), mixing STARTED ones, closed ones due at the upgrade and
// closed ones retained, over both agents; it returns how many of each.
func v3History(tb testing.TB, m migrator, ctx sdk.Context, n int) (started, due, kept int) {
	tb.Helper()
	agents := [2]string{bech(agentByte), bech(secondAgentByte)}
	for i := range n {
		inf := types.Inference{
			InferenceId: fmt.Sprintf("inf-%05d", i), Model: "m", TransferAgent: agents[i%2], Executor: bech(1),
			PromptHash: "cHJvbXB0", EpochIndex: 1,
		}
		switch i % 3 {
		case 0:
			inf.Status, inf.StartHeight, inf.ExpirationHeight = types.INFERENCE_STATUS_STARTED, 295, 295+testExpiration
			started++
		case 1:
			inf.Status, inf.StartHeight, inf.ExpirationHeight, inf.EndHeight = types.INFERENCE_STATUS_FINISHED, 95, 105, 100
			due++
		default:
			inf.Status, inf.StartHeight, inf.ExpirationHeight, inf.EndHeight = types.INFERENCE_STATUS_EXPIRED, 250, 260, 260
			kept++
		}
		require.NoError(tb, m.SetV3Inference(ctx, inf))
	}
	return started, due, kept
}

// The batched migration gives the same store whatever the batch: one
// entry at a time, batches that end mid-history and on its last entry,
// and the default batch larger than the whole history.
func TestMigrate3to4AcrossBatchBoundaries(t *testing.T) {
	const n = 12
	var started, kept int
	migrated := func(batch int) *fixture {
		f := v3Store(t)
		m := newMigrator(*f.k)
		started, _, kept = v3History(t, m, f.ctx, n)
		if batch == 0 {
			require.NoError(t, m.Migrate3to4(f.ctx))
		} else {
			require.NoError(t, m.Migrate3to4InBatches(f.ctx, batch))
		}
		return f
	}
	want := migrated(0)
	infs, _ := storedInferencesOf(t, want.ctx, *want.k)
	var ids []string
	for _, inf := range infs {
		ids = append(ids, inf.InferenceId)
	}
	require.Len(t, ids, 4+started+kept, "v3Store's four retained, the history's STARTED and retained ones; the due ones deleted")
	requireIndexesMatch(t, want, int64(types.DefaultInferenceRetentionEpochs)*testEpochLength, "after the migration")
	for _, batch := range []int{1, 2, 3, 5, n + 6, n + 7} {
		require.Equal(t, want.dump(), migrated(batch).dump(), "batch %d", batch)
	}
	require.ErrorContains(t, newMigrator(*want.k).Migrate3to4InBatches(want.ctx, 0), "must be at least 1")
}

// BenchmarkMigrate3to4 times the upgrade block's migration of a
// version-3 history of 100,000 inferences (a third STARTED, a third due
// and deleted, a third retained), committed first and migrated in a cache
// over it, as the upgrade block's state is, then flushed:
// go test -run '^$' -bench BenchmarkMigrate3to4 -benchtime 3x ./x/inference/keeper/
func BenchmarkMigrate3to4(b *testing.B) {
	const n = 100_000
	for b.Loop() {
		b.StopTimer()
		k, tc, bank := testutil.KeeperWithBank(b)
		gs := types.DefaultGenesis()
		gs.Params = testParams()
		agents, err := testutil.BondedAgents(gs.Params, addr(agentByte), addr(secondAgentByte))
		require.NoError(b, err)
		gs.TransferAgents = agents
		bank.HoldBonds(agents)
		ctx := tc.Ctx.WithBlockHeight(0)
		require.NoError(b, k.InitGenesis(ctx, *gs))
		ctx = ctx.WithBlockHeight(migrationHeight)
		p := testParams()
		p.InferenceRetentionEpochs = 0
		require.NoError(b, k.Params.Set(ctx, p))
		m := newMigrator(k)
		v3History(b, m, ctx, n)
		tc.CMS.Commit()
		upgrade := ctx.WithMultiStore(tc.CMS.CacheMultiStore())
		b.StartTimer()
		require.NoError(b, m.Migrate3to4(upgrade))
		upgrade.MultiStore().(storetypes.CacheMultiStore).Write()
	}
}
