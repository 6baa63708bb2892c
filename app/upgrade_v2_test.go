package app

import (
	"testing"

	"cosmossdk.io/log/v2"
	"cosmossdk.io/math"
	cmtproto "github.com/cometbft/cometbft/proto/tendermint/types"
	dbm "github.com/cosmos/cosmos-db"
	upgradetypes "github.com/cosmos/cosmos-sdk/x/upgrade/types"
	"github.com/stretchr/testify/require"

	simtestutil "github.com/cosmos/cosmos-sdk/testutil/sims"
	sdk "github.com/cosmos/cosmos-sdk/types"
	authtypes "github.com/cosmos/cosmos-sdk/x/auth/types"
	banktypes "github.com/cosmos/cosmos-sdk/x/bank/types"

	inferencemodule "github.com/inferenced/inferenced/x/inference/module"
	inferencetypes "github.com/inferenced/inferenced/x/inference/types"
)

// versionOneParams are the params as the previous release stores them: the
// fields added since (transfer agents, the traffic trip rule, retention,
// participant bonds) unset.
func versionOneParams() inferencetypes.Params {
	p := inferencetypes.DefaultParams()
	p.TransferAgentMinBond = sdk.Coin{}
	p.MaxTransferAgents, p.TransferAgentMissAllowance, p.TransferAgentMissAllowancePct = 0, 0, 0
	p.HealthCbTrafficMinAgents = 0
	p.HealthCbTrafficWindowSamples, p.HealthCbTrafficMinSamples = 0, 0
	p.HealthCbTrafficMissThresholdPct, p.HealthCbTrafficConsecutiveMisses = 0, 0
	p.InferenceRetentionEpochs = 0
	p.ParticipantMinBond, p.ParticipantBondPerWeight = sdk.Coin{}, math.Int{}
	return p
}

// The v2 handler on a previous-release store: x/inference goes from version
// 1 to the module's ConsensusVersion through every registered step, the
// params gain the new fields at their defaults, vote extensions, off on
// that chain, start at the block after the upgrade, and so does HEALTH3.
func TestUpgradeToV2FromVersionOne(t *testing.T) {
	a, err := New(log.NewNopLogger(), dbm.NewMemDB(), true, simtestutil.NewAppOptionsWithFlagHome(t.TempDir()))
	require.NoError(t, err)
	const upgradeHeight = 100
	ctx := a.NewNextBlockContext(cmtproto.Header{Height: upgradeHeight})
	require.NoError(t, a.InferenceKeeper.Params.Set(ctx, versionOneParams()))
	require.NoError(t, a.ConsensusParamsKeeper.ParamsStore.Set(ctx, cmtproto.ConsensusParams{
		Block: &cmtproto.BlockParams{MaxBytes: 1 << 20, MaxGas: -1},
	}))

	from := a.ModuleManager.GetVersionMap()
	from[inferencetypes.ModuleName] = 1
	to, err := a.upgradeToV2(ctx, upgradetypes.Plan{Name: UpgradeV2, Height: upgradeHeight}, from)
	require.NoError(t, err)
	require.Equal(t, uint64(inferencemodule.ConsensusVersion), to[inferencetypes.ModuleName])

	got, err := a.InferenceKeeper.Params.Get(ctx)
	require.NoError(t, err)
	require.Equal(t, inferencetypes.DefaultParams(), got, "every new param at its default, the rest as stored")
	cp, err := a.ConsensusParamsKeeper.ParamsStore.Get(ctx)
	require.NoError(t, err)
	require.Equal(t, int64(upgradeHeight+1), cp.Abci.VoteExtensionsEnableHeight)
	switchAt, set, err := a.InferenceKeeper.BundleV3Switch(ctx)
	require.NoError(t, err)
	require.True(t, set)
	require.Equal(t, int64(upgradeHeight+1), switchAt, "the first bundle, at H+2, is HEALTH3")
}

// A store the migrations refuse fails the handler with the upgrade's name
// and height in the error, which x/upgrade turns into a failed upgrade block
// (nothing of it committed).
func TestUpgradeToV2FailsOnABadStore(t *testing.T) {
	a, err := New(log.NewNopLogger(), dbm.NewMemDB(), true, simtestutil.NewAppOptionsWithFlagHome(t.TempDir()))
	require.NoError(t, err)
	ctx := a.NewNextBlockContext(cmtproto.Header{Height: 100})
	require.NoError(t, a.ConsensusParamsKeeper.ParamsStore.Set(ctx, cmtproto.ConsensusParams{
		Block: &cmtproto.BlockParams{MaxBytes: 1 << 20, MaxGas: -1},
	}))
	// No params at all: version 1 always stored them.
	from := a.ModuleManager.GetVersionMap()
	from[inferencetypes.ModuleName] = 1
	_, err = a.upgradeToV2(ctx, upgradetypes.Plan{Name: UpgradeV2, Height: 100}, from)
	require.ErrorContains(t, err, "upgrade v2 at height 100: migrations")
}

// Attack: on the previous release anyone could send 1stake to the
// inference module's address, leaving a plain account there, after which
// x/bank would refuse every bond paid to the module and no agent or
// participant could ever register. The upgrade makes it the module
// account, keeping the account number and the balance.
func TestUpgradeToV2TurnsAPlainAccountAtTheModuleAddressIntoTheModuleAccount(t *testing.T) {
	a, err := New(log.NewNopLogger(), dbm.NewMemDB(), true, simtestutil.NewAppOptionsWithFlagHome(t.TempDir()))
	require.NoError(t, err)
	ctx := a.NewNextBlockContext(cmtproto.Header{Height: 100})
	addr := authtypes.NewModuleAddress(inferencetypes.ModuleName)
	plain := a.AccountKeeper.NewAccountWithAddress(ctx, addr)
	a.AccountKeeper.SetAccount(ctx, plain)
	gift := sdk.NewCoins(sdk.NewInt64Coin("stake", 1))
	payer := sdk.AccAddress("payer_______________")
	a.BankKeeper.InitGenesis(ctx, &banktypes.GenesisState{
		Params:   banktypes.DefaultParams(),
		Balances: []banktypes.Balance{{Address: addr.String(), Coins: gift}, {Address: payer.String(), Coins: gift}},
		Supply:   gift.Add(gift...),
	})

	require.NoError(t, a.ensureModuleAccount(ctx, inferencetypes.ModuleName))
	acc := a.AccountKeeper.GetAccount(ctx, addr)
	mod, ok := acc.(sdk.ModuleAccountI)
	require.True(t, ok, "still a plain account: %T", acc)
	require.Equal(t, inferencetypes.ModuleName, mod.GetName())
	require.Equal(t, plain.GetAccountNumber(), mod.GetAccountNumber())
	require.Equal(t, gift, a.BankKeeper.GetAllBalances(ctx, addr))

	// A bond can be paid into it now.
	require.NoError(t, a.BankKeeper.SendCoinsFromAccountToModule(ctx, payer, inferencetypes.ModuleName, gift))
}

// A chain whose inference module address was never touched gets the module
// account; one that has it keeps it.
func TestUpgradeToV2CreatesTheModuleAccountOnce(t *testing.T) {
	a, err := New(log.NewNopLogger(), dbm.NewMemDB(), true, simtestutil.NewAppOptionsWithFlagHome(t.TempDir()))
	require.NoError(t, err)
	ctx := a.NewNextBlockContext(cmtproto.Header{Height: 100})
	addr := authtypes.NewModuleAddress(inferencetypes.ModuleName)
	require.Nil(t, a.AccountKeeper.GetAccount(ctx, addr))
	require.NoError(t, a.ensureModuleAccount(ctx, inferencetypes.ModuleName))
	first := a.AccountKeeper.GetAccount(ctx, addr)
	_, ok := first.(sdk.ModuleAccountI)
	require.True(t, ok)
	require.NoError(t, a.ensureModuleAccount(ctx, inferencetypes.ModuleName))
	require.Equal(t, first, a.AccountKeeper.GetAccount(ctx, addr))
}

// The SDK's start command closes the app twice on a normal shutdown; the
// second call must neither panic (the route warmer's stop channel) nor
// report a new error.
func TestAppClosesTwice(t *testing.T) {
	a, err := New(log.NewNopLogger(), dbm.NewMemDB(), true, simtestutil.NewAppOptionsWithFlagHome(t.TempDir()))
	require.NoError(t, err)
	first := a.Close()
	require.NotPanics(t, func() { require.Equal(t, first, a.Close()) })
}
