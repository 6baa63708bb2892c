package breakerstore

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/inferenced/inferenced/x/inference/types"
)

// What TestStepMatchesLegacy compares now that today's store carries
// streaks (streaks.go), and the restarts it puts today's store through.

// compareStores requires the two stores to hold the same breaker state as
// the breaker reads it: the records as ExportGenesis materializes them,
// the count, the queued mark, the cooldown entries and the gates (census).
// Where got's streaks item carries nothing, every key and value but the
// held bits and the sample sequence (set, to its value, by a genesis
// import: restart) must be the same too. It returns want's dump.
func compareStores(t *testing.T, want, got *stepEnv, h int64, seen map[string]int) [][2][]byte {
	wc, err := want.s.read(want.base)
	require.NoError(t, err)
	gc, err := got.s.read(got.base)
	require.NoError(t, err)
	require.Equal(t, wc, gc, "block %d: the breaker state as read (materialized records, indexes)", h)
	k, found, err := got.s.loadStreaks(got.base)
	require.NoError(t, err)
	dump := withoutPrefix(withoutPrefix(want.dump(t), types.HeldBitsKey), types.SampleSequenceKey)
	if !found {
		seen["no streak carried"]++
		require.Equal(t, dump, withoutPrefix(withoutPrefix(got.dump(t), types.HeldBitsKey), types.SampleSequenceKey), "block %d: store contents", h)
		return dump
	}
	if k.miss != nil {
		seen["miss streak carried"]++
	}
	if k.ok != nil {
		seen["service ok streak carried"]++
	}
	return dump
}

// streaksNow is the committed streaks item (zero when absent).
func (e *stepEnv) streaksNow(t *testing.T) streaks {
	k, _, err := e.s.loadStreaks(e.base)
	require.NoError(t, err)
	return k
}

// tallyStreaks counts how a block ended or kept the streaks it started
// with, and the streaks the item carried for 10 blocks in a row (runs).
func tallyStreaks(seen map[string]int, h int64, prev, next streaks, runs map[uint32][2]int) {
	for i := range uint32(8 * max(len(prev.miss), len(prev.ok), len(next.miss), len(next.ok))) {
		r := runs[i]
		for kind, carried := range [2]bool{next.miss.has(i) && next.missAt == h, next.ok.has(i) && next.okAt == h} {
			if !carried {
				r[kind] = 0
				continue
			}
			if r[kind]++; r[kind] == 10 {
				seen[[2]string{"miss streak of 10 blocks", "service ok streak of 10 blocks"}[kind]]++
			}
		}
		runs[i] = r
	}
	if prev.miss != nil && next.missAt != prev.missAt && prev.miss.minus(next.miss) != nil {
		seen["miss streak ended"]++
	}
	if prev.ok != nil && next.okAt != prev.okAt && prev.ok.minus(next.ok) != nil {
		seen["service ok streak ended"]++
	}
	if prev.miss != nil && next.missAt == prev.missAt && next.miss != nil && h > prev.missAt {
		seen["miss streak kept through a block without one"]++
	}
}

// withoutPrefix is dump without the keys under prefix.
func withoutPrefix(dump [][2][]byte, prefix []byte) [][2][]byte {
	var out [][2][]byte
	for _, kv := range dump {
		if !bytes.HasPrefix(kv[0], prefix) {
			out = append(out, kv)
		}
	}
	return out
}

// restart gives got's store, between blocks, what a node finds after a
// genesis export and import (the records as exported, no streaks item),
// or after the v7 upgrade (the records as the step of before stored
// them: materialized; no streaks item; the held bits built by the
// migration).
func restart(t *testing.T, w *world, env *stepEnv, h int64, seen map[string]int) {
	ctx, cache := env.block(h)
	_, carried, err := env.s.loadStreaks(ctx)
	require.NoError(t, err)
	var gs types.GenesisState
	require.NoError(t, env.s.ExportGenesis(ctx, &gs))
	if w.r.IntN(2) == 0 {
		require.NoError(t, env.s.Clear(ctx))
		require.NoError(t, env.s.InitGenesis(ctx, gs))
		seen[pick(carried, "genesis import mid-streak", "genesis import")]++
	} else {
		for _, rec := range gs.ExecutorHealth {
			addr, err := ac.StringToBytes(rec.Address)
			require.NoError(t, err)
			require.NoError(t, env.s.records.Set(ctx, addr, rec))
		}
		require.NoError(t, env.s.streaks.Remove(ctx))
		require.NoError(t, env.s.bits.Remove(ctx))
		require.NoError(t, env.s.BuildHeldBits(ctx))
		seen[pick(carried, "upgrade mid-streak", "upgrade")]++
	}
	env.commit(cache)
}
