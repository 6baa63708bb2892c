package keeper_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/inferenced/inferenced/x/inference/types"
)

// The version-5 to 6 migration records the health bundle layout switch:
// blocks from the one after the upgrade block carry HEALTH3. A version-5
// store has no switch height (HEALTH2 throughout); one that has is refused
// and keeps it.
func TestMigrate5to6SetsTheBundleSwitch(t *testing.T) {
	earlier := int64(40)
	cases := []struct {
		name     string
		stored   *int64 // nil: a version-5 store, without the record
		height   int64  // the upgrade block
		want     int64
		wantSet  bool
		wantsErr bool
	}{
		{name: "a version-5 store", height: 87, want: 88, wantSet: true},
		{name: "a store that has a switch height already", stored: &earlier, height: 87, want: 40, wantSet: true, wantsErr: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t)
			require.NoError(t, f.k.BundleV3Height.Remove(f.ctx), "as a version-5 store")
			_, set, err := f.k.BundleV3Switch(f.ctx)
			require.NoError(t, err)
			require.False(t, set)
			if c.stored != nil {
				require.NoError(t, f.k.BundleV3Height.Set(f.ctx, *c.stored))
			}
			ctx := f.ctx.WithBlockHeight(c.height)
			err = newMigrator(*f.k).Migrate5to6(ctx)
			require.Equal(t, c.wantsErr, err != nil, "%v", err)
			got, set, err := f.k.BundleV3Switch(ctx)
			require.NoError(t, err)
			require.Equal(t, c.wantSet, set)
			require.Equal(t, c.want, got)
		})
	}
}

// Genesis keeps the switch height: a new chain's (1), one a genesis file
// written before the field has (0: the same, from the first block), and
// one a migrated chain exports (its upgrade height + 1).
func TestGenesisKeepsTheBundleSwitch(t *testing.T) {
	for _, h := range []int64{1, 0, 88} {
		gs := richGenesis()
		gs.BundleV3Height = h
		k, ctx := requireGenesisRoundTrip(t, gs)
		got, set, err := k.BundleV3Switch(ctx)
		require.NoError(t, err)
		require.True(t, set)
		require.Equal(t, h, got)
	}
	require.Equal(t, int64(1), types.DefaultGenesis().BundleV3Height, "a new chain carries HEALTH3 from its first block")
}

// A store from before version 6 (no switch height) exports 0.
func TestExportWithoutTheBundleSwitch(t *testing.T) {
	f := newFixture(t)
	require.NoError(t, f.k.BundleV3Height.Remove(f.ctx))
	out, err := f.k.ExportGenesis(f.ctx)
	require.NoError(t, err)
	require.Zero(t, out.BundleV3Height)
}
