package app

import (
	"context"
	"fmt"

	"cosmossdk.io/collections"
	cmtproto "github.com/cometbft/cometbft/proto/tendermint/types"
	sdk "github.com/cosmos/cosmos-sdk/types"
	"github.com/cosmos/cosmos-sdk/types/module"
	stakingtypes "github.com/cosmos/cosmos-sdk/x/staking/types"
	upgradetypes "github.com/cosmos/cosmos-sdk/x/upgrade/types"

	inferencetypes "github.com/inferenced/inferenced/x/inference/types"
)

// The software upgrades this release performs: a governance
// MsgSoftwareUpgrade with a plan of one of these names halts the old
// binary at the plan height, and this binary, started in its place
// (cosmovisor's upgrades/<name>/bin), runs the handler in that block.
// docs/upgrade.md is the operator's side.
const (
	// UpgradeV2 brings a chain from the release at d74237b
	// (tests/upgrade/PREVIOUS_RELEASE_V2, x/inference at version 1) to this
	// one: vote extensions on, the module account, migrations 1 to 7.
	UpgradeV2 = "v2"
	// UpgradeV3 brings a chain from the release at 2d859e8
	// (tests/upgrade/PREVIOUS_RELEASE, x/inference at version 5, health
	// bundles in HEALTH2) to this one: migrations 5 to 6, which switches the
	// bundles to HEALTH3 from the block after the upgrade, and 6 to 7, which
	// builds the breaker's held bits (its streaks item starts absent).
	UpgradeV3 = "v3"
	// UpgradeV4 brings a chain from the release at 7a047d5
	// (tests/upgrade/PREVIOUS_RELEASE: Cosmos SDK v0.53.8, CometBFT
	// v0.38.26, x/inference at version 7) to this one, on SDK v0.55 and
	// CometBFT v0.40: the SDK's migrations (x/auth 5 to 7, x/staking 5 to
	// 6) and x/staking's key-rotation fee pool made a module account.
	// x/inference's state is as it was (version 7 on both sides).
	UpgradeV4 = "v4"
	// UpgradeName is the upgrade from the release right before this one.
	UpgradeName = UpgradeV4
)

// v3From and v4From are the x/inference versions UpgradeV3 and UpgradeV4
// start from.
const (
	v3From = 5
	v4From = 7
)

// registerUpgrades installs the handlers of the upgrades this release
// performs. All stay registered: x/upgrade refuses to start a binary that
// lacks the handler of the chain's last applied upgrade, and a chain on
// an older release can still take its own upgrade straight to this one
// (each handler runs every migration from where the chain stands, the
// SDK's included). x/upgrade halts a chain that schedules an upgrade whose
// handler the running binary already has ("binary updated before
// trigger"): a chain that took v2 or v3 on this release, or started on it,
// has nothing to upgrade to v4; a chain started on this release enables
// vote extensions in genesis (or by a consensus-params proposal).
//
// No upgrade of this release adds or deletes a store: the SDK v0.55 move
// removes x/params and x/protocolpool, which this app never mounted, and
// adds no store to the modules it wires (TestStoresAreThoseOfThePreviousRelease
// pins the list), so no store loader is set.
func (app *App) registerUpgrades() {
	app.UpgradeKeeper.SetUpgradeHandler(UpgradeV2, app.upgradeToV2)
	app.UpgradeKeeper.SetUpgradeHandler(UpgradeV3, app.upgradeToV3)
	app.UpgradeKeeper.SetUpgradeHandler(UpgradeV4, app.upgradeToV4)
}

// upgradeToV2 runs in the pre-block of the plan height H. It switches
// health attestation on from H+1 on a chain that ran without it, makes
// the inference module's address the module account that holds bonds
// (ensureModuleAccount), then runs every module's registered
// migrations (migrate: x/inference 1 to 7: health bundles in HEALTH3 from H+1, the
// breaker's held bits built). Any
// error fails block H: x/upgrade runs the handler on the block's state,
// which FinalizeBlock discards on error, so nothing of a failed migration
// is committed and the node stops at H with the error in its log.
func (app *App) upgradeToV2(ctx context.Context, plan upgradetypes.Plan, vm module.VersionMap) (module.VersionMap, error) {
	sdkCtx := sdk.UnwrapSDKContext(ctx)
	enabled, err := enableVoteExtensions(ctx, app.ConsensusParamsKeeper.ParamsStore, sdkCtx.BlockHeight()+1)
	if err != nil {
		return nil, fmt.Errorf("upgrade %s at height %d: %w", plan.Name, sdkCtx.BlockHeight(), err)
	}
	if err := app.ensureModuleAccount(ctx, inferencetypes.ModuleName); err != nil {
		return nil, fmt.Errorf("upgrade %s at height %d: %w", plan.Name, sdkCtx.BlockHeight(), err)
	}
	sdkCtx.Logger().Info("software upgrade: running migrations", "name", plan.Name,
		"height", sdkCtx.BlockHeight(), "from", vm, "vote_extensions_enable_height", enabled)
	return app.migrate(ctx, plan, vm)
}

// upgradeToV3 runs in the pre-block of the plan height H, on a chain of the
// release at 2d859e8 (x/inference version 5): it runs every module's
// registered migrations, x/inference 5 to 6, which records H+1 as the
// height from which blocks carry their health bundle in HEALTH3, and 6 to
// 7, which builds the breaker's held bits from its records (its streaks
// item starts absent: block H's step visits every sample). Block H,
// proposed by the previous release in HEALTH2, is finalized here: the
// pre-blocker, after this handler, applies its attestations as it carries
// them. Vote extensions are left as the chain has them. A chain at an older
// version takes v2 instead (its handler enables what those lack), so one is
// refused here. Any error fails block H, as for v2.
func (app *App) upgradeToV3(ctx context.Context, plan upgradetypes.Plan, vm module.VersionMap) (module.VersionMap, error) {
	sdkCtx := sdk.UnwrapSDKContext(ctx)
	if v := vm[inferencetypes.ModuleName]; v < v3From {
		return nil, fmt.Errorf("upgrade %s at height %d: x/inference is at version %d; %s starts from version %d (a chain on an older release takes %s)",
			plan.Name, sdkCtx.BlockHeight(), v, UpgradeV3, v3From, UpgradeV2)
	}
	sdkCtx.Logger().Info("software upgrade: running migrations", "name", plan.Name,
		"height", sdkCtx.BlockHeight(), "from", vm, "health_bundle_v3_from", sdkCtx.BlockHeight()+1)
	return app.migrate(ctx, plan, vm)
}

// upgradeToV4 runs in the pre-block of the plan height H, on a chain of the
// release at 7a047d5 (x/inference version 7, SDK v0.53): it runs the
// migrations of the SDK v0.55 move (x/auth 5 to 7: the ML-DSA signature
// cost param; x/staking 5 to 6: the key-rotation fee param, 1000000 of the
// bond denom) after making x/staking's key-rotation fee pool a module
// account (migrate). x/inference is already at version 7: its state is
// untouched, and block H's attestations are applied by the pre-blocker as
// any block's. A chain at an older x/inference version takes v3 or v2 (its
// own upgrade, which does the same and what that version lacks), so one is
// refused here. Any error fails block H, as for v2.
func (app *App) upgradeToV4(ctx context.Context, plan upgradetypes.Plan, vm module.VersionMap) (module.VersionMap, error) {
	sdkCtx := sdk.UnwrapSDKContext(ctx)
	if v := vm[inferencetypes.ModuleName]; v < v4From {
		return nil, fmt.Errorf("upgrade %s at height %d: x/inference is at version %d; %s starts from version %d (a chain on an older release takes %s or %s)",
			plan.Name, sdkCtx.BlockHeight(), v, UpgradeV4, v4From, UpgradeV3, UpgradeV2)
	}
	sdkCtx.Logger().Info("software upgrade: running migrations", "name", plan.Name,
		"height", sdkCtx.BlockHeight(), "from", vm)
	return app.migrate(ctx, plan, vm)
}

// migrate is what every upgrade to this release ends with, whatever it
// starts from: x/staking's key-rotation fee pool made a module account (the
// SDK v0.55 move adds it; ensureModuleAccount says why it cannot be left
// to the first fee), then every module's registered migrations from the
// chain's versions to this binary's.
func (app *App) migrate(ctx context.Context, plan upgradetypes.Plan, vm module.VersionMap) (module.VersionMap, error) {
	height := sdk.UnwrapSDKContext(ctx).BlockHeight()
	if err := app.ensureModuleAccount(ctx, stakingtypes.KeyRotationFeePoolName); err != nil {
		return nil, fmt.Errorf("upgrade %s at height %d: %w", plan.Name, height, err)
	}
	to, err := app.ModuleManager.RunMigrations(ctx, app.configurator, vm)
	if err != nil {
		return nil, fmt.Errorf("upgrade %s at height %d: migrations: %w", plan.Name, height, err)
	}
	return to, nil
}

// enableVoteExtensions sets the vote extension enable height to height if
// extensions are off, and returns the enable height in force afterwards. A
// chain that already has a height keeps it: CometBFT refuses to move it
// once reached, and a later one set by governance stands. height must be
// in the future of the block that sets it (the caller's block + 1):
// CometBFT rejects an enable height at or below the current one.
func enableVoteExtensions(ctx context.Context, store collections.Item[cmtproto.ConsensusParams], height int64) (int64, error) {
	if current := sdk.UnwrapSDKContext(ctx).BlockHeight(); height <= current {
		return 0, fmt.Errorf("vote extension enable height %d is not after the current block %d", height, current)
	}
	cp, err := store.Get(ctx)
	if err != nil {
		return 0, fmt.Errorf("load consensus params: %w", err)
	}
	if cp.Abci != nil && cp.Abci.VoteExtensionsEnableHeight > 0 {
		return cp.Abci.VoteExtensionsEnableHeight, nil
	}
	cp.Abci = &cmtproto.ABCIParams{VoteExtensionsEnableHeight: height}
	if err := store.Set(ctx, cp); err != nil {
		return 0, fmt.Errorf("store consensus params: %w", err)
	}
	return height, nil
}
