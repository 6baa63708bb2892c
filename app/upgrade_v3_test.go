package app

import (
	"testing"

	"cosmossdk.io/log/v2"
	cmtproto "github.com/cometbft/cometbft/proto/tendermint/types"
	dbm "github.com/cosmos/cosmos-db"
	sdk "github.com/cosmos/cosmos-sdk/types"
	upgradetypes "github.com/cosmos/cosmos-sdk/x/upgrade/types"
	"github.com/stretchr/testify/require"

	simtestutil "github.com/cosmos/cosmos-sdk/testutil/sims"

	"github.com/inferenced/inferenced/abci/proposals"
	inferencemodule "github.com/inferenced/inferenced/x/inference/module"
	inferencetypes "github.com/inferenced/inferenced/x/inference/types"
)

// versionFiveApp is an app whose x/inference store is as the release at
// 2d859e8 leaves it at height h: default params, vote extensions on since
// block 2, no bundle switch height (HEALTH2 throughout).
func versionFiveApp(t *testing.T, h int64) (*App, sdk.Context, cmtproto.ConsensusParams) {
	t.Helper()
	a, err := New(log.NewNopLogger(), dbm.NewMemDB(), true, simtestutil.NewAppOptionsWithFlagHome(t.TempDir()))
	require.NoError(t, err)
	ctx := a.NewNextBlockContext(cmtproto.Header{Height: h})
	require.NoError(t, a.InferenceKeeper.Params.Set(ctx, inferencetypes.DefaultParams()))
	cp := cmtproto.ConsensusParams{
		Block: &cmtproto.BlockParams{MaxBytes: 1 << 20, MaxGas: -1},
		Abci:  &cmtproto.ABCIParams{VoteExtensionsEnableHeight: 2},
	}
	require.NoError(t, a.ConsensusParamsKeeper.ParamsStore.Set(ctx, cp))
	_, set, err := a.InferenceKeeper.BundleV3Switch(ctx)
	require.NoError(t, err)
	require.False(t, set, "a version-5 store has no switch height")
	return a, ctx, cp
}

// The v3 handler on a version-5 store: x/inference goes to version 7, its
// params and the consensus params unchanged, and the block after the
// upgrade is the first to carry HEALTH3; the upgrade block itself (the
// previous release's proposal) is HEALTH2.
func TestUpgradeToV3FromVersionFive(t *testing.T) {
	const upgradeHeight = 100
	a, ctx, cp := versionFiveApp(t, upgradeHeight)
	from := a.ModuleManager.GetVersionMap()
	from[inferencetypes.ModuleName] = 5
	to, err := a.upgradeToV3(ctx, upgradetypes.Plan{Name: UpgradeV3, Height: upgradeHeight}, from)
	require.NoError(t, err)
	require.Equal(t, uint64(inferencemodule.ConsensusVersion), to[inferencetypes.ModuleName])
	require.Equal(t, uint64(7), to[inferencetypes.ModuleName])

	got, err := a.InferenceKeeper.Params.Get(ctx)
	require.NoError(t, err)
	require.Equal(t, inferencetypes.DefaultParams(), got)
	gotCP, err := a.ConsensusParamsKeeper.ParamsStore.Get(ctx)
	require.NoError(t, err)
	require.Equal(t, cp, gotCP, "vote extensions as the chain had them")
	for _, c := range []struct {
		height int64
		want   proposals.Layout
	}{{upgradeHeight - 1, proposals.LayoutV2}, {upgradeHeight, proposals.LayoutV2}, {upgradeHeight + 1, proposals.LayoutV3}, {upgradeHeight + 2, proposals.LayoutV3}} {
		layout, err := proposals.LayoutAt(ctx, a.InferenceKeeper, c.height)
		require.NoError(t, err)
		require.Equal(t, c.want, layout, "block %d", c.height)
	}
}

// A chain older than the release at 2d859e8 must take v2 (which enables
// what it lacks): v3 refuses it, naming both, and fails the upgrade block.
func TestUpgradeToV3RefusesAnOlderStore(t *testing.T) {
	for _, version := range []uint64{1, 4} {
		a, ctx, _ := versionFiveApp(t, 100)
		from := a.ModuleManager.GetVersionMap()
		from[inferencetypes.ModuleName] = version
		_, err := a.upgradeToV3(ctx, upgradetypes.Plan{Name: UpgradeV3, Height: 100}, from)
		require.ErrorContains(t, err, "upgrade v3 at height 100: x/inference is at version")
		require.ErrorContains(t, err, "takes v2")
		_, set, err := a.InferenceKeeper.BundleV3Switch(ctx)
		require.NoError(t, err)
		require.False(t, set, "nothing migrated")
	}
}
