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

// UpgradeHealthAttestation is the software upgrade that switches health
// attestation on for a chain that started without vote extensions: the
// block after the upgrade height is the first whose votes carry them, and
// the block after that the first with a health bundle. Until then the
// breaker runs on traffic samples alone.
const UpgradeHealthAttestation = "health-attestation"

// registerUpgrades installs the handlers of the upgrades this release
// performs. x/upgrade halts a chain that schedules an upgrade whose handler
// the running binary already has ("binary updated before trigger"), so a
// chain started on this release enables extensions in genesis instead (or
// by a consensus-params proposal); the handler is for chains that upgrade
// to it.
func (app *App) registerUpgrades() {
	if !withUpgradeHandlers {
		return
	}
	app.UpgradeKeeper.SetUpgradeHandler(UpgradeHealthAttestation,
		func(ctx context.Context, plan upgradetypes.Plan, vm module.VersionMap) (module.VersionMap, error) {
			enabled, err := enableVoteExtensions(ctx, app.ConsensusParamsKeeper.ParamsStore, plan.Height+1)
			if err != nil {
				return nil, fmt.Errorf("upgrade %s: %w", plan.Name, err)
			}
			sdk.UnwrapSDKContext(ctx).Logger().Info("health attestation upgrade",
				"upgrade_height", plan.Height, "vote_extensions_enable_height", enabled)
			return app.ModuleManager.RunMigrations(ctx, app.configurator, vm)
		})
}

// enableVoteExtensions sets the vote extension enable height to height if
// extensions are off, and returns the enable height in force afterwards. A
// chain that already has a height keeps it: CometBFT refuses to move it
// once reached, and an earlier one set by governance stands.
func enableVoteExtensions(ctx context.Context, store collections.Item[cmtproto.ConsensusParams], height int64) (int64, error) {
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
