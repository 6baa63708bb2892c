package app

import (
	"slices"
	"testing"

	"cosmossdk.io/log/v2"
	"cosmossdk.io/math"
	cmtproto "github.com/cometbft/cometbft/proto/tendermint/types"
	dbm "github.com/cosmos/cosmos-db"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/encoding/protowire"

	simtestutil "github.com/cosmos/cosmos-sdk/testutil/sims"
	sdk "github.com/cosmos/cosmos-sdk/types"
	"github.com/cosmos/cosmos-sdk/types/module"
	authtypes "github.com/cosmos/cosmos-sdk/x/auth/types"
	stakingtypes "github.com/cosmos/cosmos-sdk/x/staking/types"
	upgradetypes "github.com/cosmos/cosmos-sdk/x/upgrade/types"

	inferencetypes "github.com/inferenced/inferenced/x/inference/types"
)

// v053Versions is the module version map of the release at 7a047d5 (SDK
// v0.53.8): x/auth and x/staking at 5, the rest as this release has them.
func v053Versions(a *App) module.VersionMap {
	vm := a.ModuleManager.GetVersionMap()
	vm[authtypes.ModuleName], vm[stakingtypes.ModuleName] = 5, 5
	return vm
}

// previousReleaseApp is an app whose stores hold what the release at
// 7a047d5 leaves at height h where the v4 migrations look: x/auth's params
// without the ML-DSA cost, x/staking's without the key-rotation fee,
// x/inference's defaults, vote extensions on since block 2.
func previousReleaseApp(t *testing.T, h int64) (*App, sdk.Context) {
	t.Helper()
	a, err := New(log.NewNopLogger(), dbm.NewMemDB(), true, simtestutil.NewAppOptionsWithFlagHome(t.TempDir()))
	require.NoError(t, err)
	ctx := a.NewNextBlockContext(cmtproto.Header{Height: h})
	authParams := authtypes.DefaultParams()
	authParams.SigVerifyCostMlDsa65 = 0
	require.NoError(t, a.AccountKeeper.Params.Set(ctx, authParams))
	stakingParams := stakingtypes.DefaultParams()
	stakingParams.BondDenom = "stake"
	// Written as the previous release stored them, without the fee's field
	// (7): SetParams now refuses a fee that is not in the bond denom.
	ctx.KVStore(a.keys[stakingtypes.StoreKey]).Set(stakingtypes.ParamsKey,
		withoutField(t, a.appCodec.MustMarshal(&stakingParams), 7))
	require.NoError(t, a.InferenceKeeper.Params.Set(ctx, inferencetypes.DefaultParams()))
	require.NoError(t, a.ConsensusParamsKeeper.ParamsStore.Set(ctx, cmtproto.ConsensusParams{
		Block: &cmtproto.BlockParams{MaxBytes: 1 << 20, MaxGas: -1},
		Abci:  &cmtproto.ABCIParams{VoteExtensionsEnableHeight: 2},
	}))
	return a, ctx
}

// The v4 handler on the previous release's store: the SDK's migrations run
// (x/auth to 7 with the ML-DSA signature cost, x/staking to 6 with a
// key-rotation fee in the bond denom), x/inference stays at 7 with its
// params and the consensus params as they were, and the key-rotation fee
// pool is a burner module account whose address x/bank refuses to pay.
func TestUpgradeToV4FromThePreviousRelease(t *testing.T) {
	const upgradeHeight = 100
	a, ctx := previousReleaseApp(t, upgradeHeight)
	cpBefore, err := a.ConsensusParamsKeeper.ParamsStore.Get(ctx)
	require.NoError(t, err)

	to, err := a.upgradeToV4(ctx, upgradetypes.Plan{Name: UpgradeV4, Height: upgradeHeight}, v053Versions(a))
	require.NoError(t, err)
	require.Equal(t, a.ModuleManager.GetVersionMap(), to)
	require.Equal(t, uint64(7), to[authtypes.ModuleName])
	require.Equal(t, uint64(6), to[stakingtypes.ModuleName])
	require.Equal(t, uint64(7), to[inferencetypes.ModuleName])

	authParams, err := a.AccountKeeper.Params.Get(ctx)
	require.NoError(t, err)
	require.Equal(t, authtypes.DefaultSigVerifyCostMlDsa65, authParams.SigVerifyCostMlDsa65)
	stakingParams, err := a.StakingKeeper.GetParams(ctx)
	require.NoError(t, err)
	require.Equal(t, sdk.NewCoin("stake", stakingtypes.DefaultKeyRotationFeeAmount), stakingParams.KeyRotationFee)
	require.True(t, stakingParams.KeyRotationFee.Amount.Equal(math.NewInt(1_000_000)))

	inferenceParams, err := a.InferenceKeeper.Params.Get(ctx)
	require.NoError(t, err)
	require.Equal(t, inferencetypes.DefaultParams(), inferenceParams)
	cpAfter, err := a.ConsensusParamsKeeper.ParamsStore.Get(ctx)
	require.NoError(t, err)
	require.Equal(t, cpBefore, cpAfter, "vote extensions as the chain had them")

	pool := authtypes.NewModuleAddress(stakingtypes.KeyRotationFeePoolName)
	acc, ok := a.AccountKeeper.GetAccount(ctx, pool).(sdk.ModuleAccountI)
	require.True(t, ok, "the key-rotation fee pool is a module account")
	require.Equal(t, []string{authtypes.Burner}, acc.GetPermissions())
	require.True(t, a.BankKeeper.BlockedAddr(pool), "nobody may pay the fee pool directly")
}

// Attack: on the previous release the fee pool's address was an ordinary
// one, so anyone could send it 1stake and leave a plain account there,
// after which x/staking could never burn a rotation fee through it. The
// upgrade makes that account the module account under the same number and
// keeps its balance.
func TestUpgradeToV4TakesOverAPlainAccountAtTheFeePool(t *testing.T) {
	a, ctx := previousReleaseApp(t, 100)
	pool := authtypes.NewModuleAddress(stakingtypes.KeyRotationFeePoolName)
	squat := a.AccountKeeper.NewAccountWithAddress(ctx, pool)
	a.AccountKeeper.SetAccount(ctx, squat)

	_, err := a.upgradeToV4(ctx, upgradetypes.Plan{Name: UpgradeV4, Height: 100}, v053Versions(a))
	require.NoError(t, err)
	acc, ok := a.AccountKeeper.GetAccount(ctx, pool).(sdk.ModuleAccountI)
	require.True(t, ok, "the plain account became the module account")
	require.Equal(t, squat.GetAccountNumber(), acc.GetAccountNumber())
}

// A chain older than the release at 7a047d5 takes its own upgrade: v4
// refuses it, naming the others, and migrates nothing.
func TestUpgradeToV4RefusesAnOlderStore(t *testing.T) {
	for _, version := range []uint64{1, 5, 6} {
		a, ctx := previousReleaseApp(t, 100)
		from := v053Versions(a)
		from[inferencetypes.ModuleName] = version
		_, err := a.upgradeToV4(ctx, upgradetypes.Plan{Name: UpgradeV4, Height: 100}, from)
		require.ErrorContains(t, err, "upgrade v4 at height 100: x/inference is at version")
		require.ErrorContains(t, err, "takes v3 or v2")
		params, err := a.StakingKeeper.GetParams(ctx)
		require.NoError(t, err)
		require.True(t, params.KeyRotationFee.IsNil() || params.KeyRotationFee.Denom == "", "nothing migrated")
	}
}

// Every upgrade stays registered: x/upgrade refuses to start a binary that
// lacks the handler of the chain's last applied upgrade (v3 on a chain of
// the release at 7a047d5 that came from 2d859e8), and an older chain can
// still take its own upgrade straight to this release.
func TestEveryUpgradeIsRegistered(t *testing.T) {
	a, err := New(log.NewNopLogger(), dbm.NewMemDB(), true, simtestutil.NewAppOptionsWithFlagHome(t.TempDir()))
	require.NoError(t, err)
	for _, name := range []string{UpgradeV2, UpgradeV3, UpgradeV4} {
		require.True(t, a.UpgradeKeeper.HasHandler(name), name)
	}
	require.Equal(t, UpgradeV4, UpgradeName, "the upgrade from the release right before this one")
}

// No upgrade of this release sets a store loader because the stores are
// those the previous releases mounted: a store added or removed here must
// come with its StoreUpgrades in the upgrade that brings it (this list is
// 7a047d5's, and 2d859e8's and d74237b's).
func TestStoresAreThoseOfThePreviousRelease(t *testing.T) {
	a, err := New(log.NewNopLogger(), dbm.NewMemDB(), true, simtestutil.NewAppOptionsWithFlagHome(t.TempDir()))
	require.NoError(t, err)
	var mounted []string
	for name := range a.keys {
		mounted = append(mounted, name)
	}
	slices.Sort(mounted)
	require.Equal(t, []string{"acc", "bank", "consensus", "distribution", "gov", "inference", "slashing", "staking", "upgrade"}, mounted)
}

// withoutField is the protobuf message bz without its field number num.
func withoutField(t *testing.T, bz []byte, num protowire.Number) []byte {
	t.Helper()
	var out []byte
	for len(bz) > 0 {
		n, typ, tagLen := protowire.ConsumeTag(bz)
		require.GreaterOrEqual(t, tagLen, 0)
		valLen := protowire.ConsumeFieldValue(n, typ, bz[tagLen:])
		require.GreaterOrEqual(t, valLen, 0)
		if n != num {
			out = append(out, bz[:tagLen+valLen]...)
		}
		bz = bz[tagLen+valLen:]
	}
	return out
}
