package keeper_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/inferenced/inferenced/x/inference/types"
)

// The version-6 to 7 migration builds the breaker's held bits from the
// records and leaves the streaks item absent; from the next block on the
// chain is the one that never went through it. Two fixtures run the same
// blocks (executors 1 and 2 attested missed in every block: EXCLUDED, the
// misses carried by the streaks item; 3 attested missed every other
// block); one of them, mid-streak, becomes a version-6 store (its records
// as a version-6 step stored them, no held bits, no item) and migrates.
func TestMigrate6to7BuildsTheHeldBits(t *testing.T) {
	f, g := newBreakerFixture(t), newBreakerFixture(t)
	block := func(h int) {
		for _, x := range []*fixture{f, g} {
			x.attest(1, true)
			x.attest(2, true)
			x.attest(3, h%2 == 0)
			x.attest(4, false)
			x.next()
		}
		require.Equal(t, g.census(), f.census(), "block %d: the breaker state as exported", h)
	}
	for h := range 12 {
		block(h)
	}
	carried, err := f.k.Breaker().HasStreaks(f.ctx)
	require.NoError(t, err)
	require.True(t, carried, "the misses of 1 and 2 are carried by the item")

	// A version-6 store: the records materialized, no item, no held bits.
	var gs types.GenesisState
	require.NoError(t, f.k.Breaker().ExportGenesis(f.ctx, &gs))
	require.NotEmpty(t, gs.ExecutorHealth)
	require.NoError(t, f.k.Breaker().Clear(f.ctx))
	require.NoError(t, f.k.Breaker().InitGenesis(f.ctx, gs))
	kv := f.k.StoreService().OpenKVStore(f.ctx)
	require.NoError(t, kv.Delete(types.HeldBitsKey))
	require.Error(t, f.k.Breaker().Invariants(f.ctx), "without held bits the records are not all indexed")

	require.NoError(t, newMigrator(*f.k).Migrate6to7(f.ctx))
	require.NoError(t, f.k.Breaker().Invariants(f.ctx), "held bits: exactly the members with a record, and the quiet ones")
	carried, err = f.k.Breaker().HasStreaks(f.ctx)
	require.NoError(t, err)
	require.False(t, carried)
	require.Equal(t, g.census(), f.census())
	for h := 12; h < 24; h++ {
		block(h)
	}

	// A store that carries a streak is not a version-6 store.
	require.Error(t, newMigrator(*f.k).Migrate6to7(f.ctx))
}
