package keeper_test

import (
	"os"
	"strconv"
	"testing"

	pruningtypes "github.com/cosmos/cosmos-sdk/store/v2/pruning/types"
	storetypes "github.com/cosmos/cosmos-sdk/store/v2/types"
	"github.com/cosmos/gogoproto/proto"
	"github.com/stretchr/testify/require"

	"github.com/cosmos/cosmos-sdk/testutil"
	sdk "github.com/cosmos/cosmos-sdk/types"

	"github.com/inferenced/inferenced/x/inference/keeper"
	"github.com/inferenced/inferenced/x/inference/types"
	"github.com/inferenced/inferenced/x/inference/verdict"
)

// The growth benchmark's shape: steady load for growthEpochs epochs, block
// by block. 20 inferences a block over 100-block epochs is 2,000 closed
// inferences an epoch, so an epoch's inferences dwarf the fixed state (100
// participants, the epoch group, breaker records) and a leak of closed
// inferences shows as a ratio far from 1; the expiration (10 blocks) is
// small against the epoch, so every expiry of an epoch happens in it.
const (
	growthExecutors   = 100
	growthPerBlock    = 20
	growthEpochLength = 100
	growthEpochs      = 10
	growthExpiration  = 10
	// Every growthExpireEvery-th start is never finished and expires. 21 is
	// prime to the 100 executors, so the misses (4.8%) spread evenly over
	// them and stay under the SPRT's and the trip rules' thresholds.
	growthExpireEvery = 21
	// growthDefaultRetention is 2 epochs (the param's default): an inference is pruned 2 epochs after the block that
	// closed it, so the retention window is full exactly at the end of
	// epoch 2 and epoch 10's state is comparable (GROWTH_RETENTION_EPOCHS
	// overrides).
	growthDefaultRetention = 2
	// Every block at height 5 mod growthQuietEvery closes nothing: no
	// finish lands in it and none of its starts is left to expire (so no
	// expiry lands on it either). With pruning by close height, the block
	// a retention later has nothing due: the idle sample of the pair.
	growthQuietEvery = 10
)

// growthAgents are three bonded transfer agents, 0xA1… to 0xA3…, used in
// turn, as the load driver uses the localnet's agents.
func growthAgents() []sdk.AccAddress {
	out := make([]sdk.AccAddress, 3)
	for i := range out {
		a := make([]byte, 20)
		for j := range a {
			a[j] = 0xA1 + byte(i)
		}
		out[i] = a
	}
	return out
}

// expiredEventType is the event an expiry emits.
var expiredEventType = proto.MessageName(&types.EventInferenceExpired{})

// storeSize is the module store's committed contents.
type storeSize struct{ keys, bytes, inferences int }

type growthRun struct {
	b      testing.TB
	k      keeper.Keeper
	tc     testutil.TestContext
	key    storetypes.StoreKey
	execs  []sdk.AccAddress
	agents []sdk.AccAddress
	// allOK is a health bundle's samples, every member attested OK, as a
	// healthy network's validators vote.
	allOK []byte
	next  uint64
	// finishes are the starts to finish by height, with their agent.
	finishes map[int64][]growthStart
	// expiring are the heights at which the unfinished starts expire;
	// expired counts the expiry events the keeper emitted.
	expiring []int64
	expired  int
}

type growthStart struct {
	id          string
	exec, agent sdk.AccAddress
}

func newGrowthRun(b testing.TB, retention uint64) *growthRun {
	p := types.DefaultParams()
	p.EpochLength, p.PocPhaseBlocks, p.ExpirationBlocks = growthEpochLength, 0, growthExpiration
	// The localnet's cooldowns: they must stay below the epoch.
	p.HealthCbInitialCooldownBlocks, p.HealthCbMaxCooldownBlocks = 10, 80
	withRetention(&p, retention)
	require.NoError(b, p.Validate())
	agents := growthAgents()
	k, tc, execs := growthGenesis(b, growthExecutors, p, agents)
	// Keep only the last committed version: the benchmark reads the latest
	// state alone, and 1,100 versions of history would only cost memory.
	tc.CMS.SetPruning(pruningtypes.NewPruningOptions(pruningtypes.PruningEverything))
	byName, ok := tc.CMS.(interface {
		StoreKeysByName() map[string]storetypes.StoreKey
	})
	require.True(b, ok, "the test multistore lists no store keys")
	key := byName.StoreKeysByName()[types.StoreKey]
	require.NotNil(b, key, "no %s store", types.StoreKey)
	vs := make([]verdict.Verdict, growthExecutors)
	for i := range vs {
		vs[i] = verdict.OK
	}
	allOK, err := verdict.Pack(vs)
	require.NoError(b, err)
	return &growthRun{b: b, k: k, tc: tc, key: key, execs: execs, agents: agents, allOK: allOK,
		finishes: map[int64][]growthStart{}}
}

// block runs height h as the app does: the pre-blocker's breaker step on
// an all-OK bundle, BeginBlock (the epoch boundary), the block's finishes
// and starts (each its own transaction), then beforeEnd (if any) and the
// block's end, and commits.
func (r *growthRun) block(h int64, beforeEnd func(sdk.Context)) {
	b, k := r.b, r.k
	ctx := r.tc.Ctx.WithBlockHeight(h).WithEventManager(sdk.NewEventManager())
	var voted uint64
	var members int
	var samples []byte
	if e, n, err := k.VoteGroup(ctx, h-1); err == nil {
		voted, members, samples = e, n, r.allOK
	}
	_, _, err := k.ApplyHealth(ctx, voted, members, samples, nil)
	require.NoError(b, err, "block %d: breaker step", h)
	require.NoError(b, k.BeginBlock(ctx), "block %d: begin block", h)
	for _, f := range r.finishes[h] {
		cc, write := ctx.CacheContext()
		require.NoError(b, finishGrowth(k, cc, f.exec, f.agent, f.id), "block %d: finish %s", h, f.id)
		write()
	}
	delete(r.finishes, h)
	for range growthPerBlock {
		j := r.next
		r.next++
		s := growthStart{id: growthID(j), exec: r.execs[j%growthExecutors], agent: r.agents[j%uint64(len(r.agents))]}
		cc, write := ctx.CacheContext()
		require.NoError(b, startGrowth(k, cc, s.agent, s.exec, s.id), "block %d: start %s", h, s.id)
		write()
		if j%growthExpireEvery == 0 && !quiet(h) {
			r.expiring = append(r.expiring, h+growthExpiration)
			continue
		}
		// Finished 1 to 4 blocks later, well before the expiration, never
		// in a quiet block.
		at := h + 1 + int64(j%3)
		if quiet(at) {
			at++
		}
		r.finishes[at] = append(r.finishes[at], s)
	}
	if beforeEnd != nil {
		beforeEnd(ctx)
	}
	require.NoError(b, blockEnd(ctx, k), "block %d: end block", h)
	for _, ev := range ctx.EventManager().Events() {
		if ev.Type == expiredEventType {
			r.expired++
		}
	}
	r.tc.CMS.Commit()
}

// quiet reports whether block h closes no inference.
func quiet(h int64) bool { return h%growthQuietEvery == 5 }

// expiresAt reports whether an inference expires in block h.
func (r *growthRun) expiresAt(h int64) bool {
	for _, at := range r.expiring {
		if at == h {
			return true
		}
	}
	return false
}

// size walks the whole committed module store.
func (r *growthRun) size() storeSize {
	var s storeSize
	it := r.tc.CMS.GetKVStore(r.key).Iterator(nil, nil)
	for ; it.Valid(); it.Next() {
		s.keys++
		s.bytes += len(it.Key()) + len(it.Value())
	}
	require.NoError(r.b, it.Close())
	n, err := storedInferences(r.tc.Ctx, r.k)
	require.NoError(r.b, err)
	s.inferences = n
	return s
}

// pruned is how many stored inferences the block's end at ctx deletes,
// from a throwaway copy of the block.
func (r *growthRun) pruned(ctx sdk.Context) int {
	before, err := storedInferences(ctx, r.k)
	require.NoError(r.b, err)
	cc, _ := ctx.CacheContext()
	require.NoError(r.b, blockEnd(cc, r.k))
	after, err := storedInferences(cc, r.k)
	require.NoError(r.b, err)
	return before - after
}

// BenchmarkGrowth runs 10 epochs of steady load through the keeper and
// reports the module store after epoch 2 and after epoch 10 (sub-benchmark
// state), then runs epoch 11 and times the block's end, on copies of the
// very blocks, in the first block that prunes and expires nothing
// (end-block/prunes) and the first quiet block, which has nothing to prune
// or expire (end-block/idle). Retention: GROWTH_RETENTION_EPOCHS (default
// 2). `make growth` runs it.
func BenchmarkGrowth(b *testing.B) {
	retention := uint64(growthDefaultRetention)
	if s := os.Getenv("GROWTH_RETENTION_EPOCHS"); s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		require.NoError(b, err, "GROWTH_RETENTION_EPOCHS")
		retention = v
	}
	r := newGrowthRun(b, retention)
	var at2, at10 storeSize
	for h := int64(1); h <= growthEpochs*growthEpochLength; h++ {
		r.block(h, nil)
		switch h {
		case 2 * growthEpochLength:
			at2 = r.size()
		case growthEpochs * growthEpochLength:
			at10 = r.size()
		}
	}
	params, err := r.k.Params.Get(r.tc.Ctx)
	require.NoError(b, err)
	b.Logf("shape: %d executors, %d agents, %d inferences a block (1 in %d expires, none in quiet blocks), epoch %d blocks, expiration %d, retention %d epochs",
		growthExecutors, len(r.agents), growthPerBlock, growthExpireEvery, growthEpochLength, growthExpiration, retentionOf(params))
	b.Logf("after epoch 2:  %d keys, %d bytes, %d inferences stored", at2.keys, at2.bytes, at2.inferences)
	b.Logf("after epoch 10: %d keys, %d bytes, %d inferences stored", at10.keys, at10.bytes, at10.inferences)
	b.Logf("epoch 10 / epoch 2: keys %.3f, bytes %.3f (goal with pruning: within 5%%)",
		float64(at10.keys)/float64(at2.keys), float64(at10.bytes)/float64(at2.bytes))
	b.Run("state", func(b *testing.B) {
		for range b.N {
		}
		b.ReportMetric(float64(at2.keys), "keys@e2")
		b.ReportMetric(float64(at2.bytes), "bytes@e2")
		b.ReportMetric(float64(at10.keys), "keys@e10")
		b.ReportMetric(float64(at10.bytes), "bytes@e10")
		b.ReportMetric(float64(at10.bytes)/float64(at2.bytes), "bytes-e10/e2")
	})
	timeEnd := func(ctx sdk.Context, name string, pruned int) {
		b.Logf("%s: block %d, %d inferences pruned", name, ctx.BlockHeight(), pruned)
		b.Run(name, func(b *testing.B) {
			for range b.N {
				cc, _ := ctx.CacheContext()
				if err := blockEnd(cc, r.k); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	var pruning, idle int
	prunedTimed, idleTimed := false, false
	first := int64(growthEpochs*growthEpochLength + 1)
	for h := first; h < first+growthEpochLength; h++ {
		r.block(h, func(ctx sdk.Context) {
			n := r.pruned(ctx)
			prunes := n > 0
			if prunes {
				pruning++
			} else {
				idle++
			}
			switch {
			case prunes && !prunedTimed && !r.expiresAt(h):
				prunedTimed = true
				timeEnd(ctx, "end-block/prunes", n)
			case !prunes && !idleTimed && quiet(h):
				idleTimed = true
				timeEnd(ctx, "end-block/idle", n)
			}
		})
	}
	b.Logf("epoch 11: %d blocks whose end prunes, %d whose end does not", pruning, idle)
}
