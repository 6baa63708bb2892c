package app

import (
	"context"
	"fmt"

	"cosmossdk.io/collections"
	upgradetypes "cosmossdk.io/x/upgrade/types"
	cmtproto "github.com/cometbft/cometbft/proto/tendermint/types"
	sdk "github.com/cosmos/cosmos-sdk/types"
	"github.com/cosmos/cosmos-sdk/types/module"
)

// UpgradeName is the software upgrade that brings a chain from the
// previous release (tests/upgrade/PREVIOUS_RELEASE, x/inference at
// version 1) to this one (version 4): a governance MsgSoftwareUpgrade with
// a plan of this name halts the old binary at the plan height, and this
// binary, started in its place (cosmovisor's upgrades/v2/bin), runs the
// handler in that block. docs/upgrade.md is the operator's side.
const UpgradeName = "v2"

// registerUpgrades installs the handler of the upgrade this release
// performs. x/upgrade halts a chain that schedules an upgrade whose handler
// the running binary already has ("binary updated before trigger"): a chain
// started on this release has nothing to upgrade to it, and enables vote
// extensions in genesis (or by a consensus-params proposal).
func (app *App) registerUpgrades() {
	app.UpgradeKeeper.SetUpgradeHandler(UpgradeName, app.upgradeToV2)
}

// upgradeToV2 runs in the pre-block of the plan height H. It switches
// health attestation on from H+1 on a chain that ran without it, makes
// the inference module's address the module account that holds bonds
// (ensureInferenceModuleAccount), then runs every module's registered
// migrations (x/inference 1 to 4). Any
// error fails block H: x/upgrade runs the handler on the block's state,
// which FinalizeBlock discards on error, so nothing of a failed migration
// is committed and the node stops at H with the error in its log.
func (app *App) upgradeToV2(ctx context.Context, plan upgradetypes.Plan, vm module.VersionMap) (module.VersionMap, error) {
	sdkCtx := sdk.UnwrapSDKContext(ctx)
	enabled, err := enableVoteExtensions(ctx, app.ConsensusParamsKeeper.ParamsStore, sdkCtx.BlockHeight()+1)
	if err != nil {
		return nil, fmt.Errorf("upgrade %s at height %d: %w", plan.Name, sdkCtx.BlockHeight(), err)
	}
	if err := app.ensureInferenceModuleAccount(ctx); err != nil {
		return nil, fmt.Errorf("upgrade %s at height %d: %w", plan.Name, sdkCtx.BlockHeight(), err)
	}
	sdkCtx.Logger().Info("software upgrade: running migrations", "name", plan.Name,
		"height", sdkCtx.BlockHeight(), "from", vm, "vote_extensions_enable_height", enabled)
	to, err := app.ModuleManager.RunMigrations(ctx, app.configurator, vm)
	if err != nil {
		return nil, fmt.Errorf("upgrade %s at height %d: migrations: %w", plan.Name, sdkCtx.BlockHeight(), err)
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
