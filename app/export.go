package app

import (
	"encoding/json"
	"errors"
	"fmt"

	cmtproto "github.com/cometbft/cometbft/proto/tendermint/types"

	servertypes "github.com/cosmos/cosmos-sdk/server/types"
	"github.com/cosmos/cosmos-sdk/x/staking"
)

// ErrZeroHeightExport is returned for `export --for-zero-height`, which this
// chain does not implement: it would rewrite staking and distribution state
// for a restart from height zero.
var ErrZeroHeightExport = errors.New("export for zero height is not supported; export at the current height")

// ExportAppStateAndValidators exports the state of every module and the
// validator set at the latest height.
func (app *App) ExportAppStateAndValidators(
	forZeroHeight bool, _ []string, modulesToExport []string,
) (servertypes.ExportedApp, error) {
	if forZeroHeight {
		return servertypes.ExportedApp{}, ErrZeroHeightExport
	}
	ctx := app.NewContextLegacy(true, cmtproto.Header{Height: app.LastBlockHeight()})
	genState, err := app.ModuleManager.ExportGenesisForModules(ctx, app.appCodec, modulesToExport)
	if err != nil {
		return servertypes.ExportedApp{}, fmt.Errorf("export module genesis: %w", err)
	}
	appState, err := json.MarshalIndent(genState, "", "  ")
	if err != nil {
		return servertypes.ExportedApp{}, fmt.Errorf("encode app state: %w", err)
	}
	validators, err := staking.WriteValidators(ctx, app.StakingKeeper)
	if err != nil {
		return servertypes.ExportedApp{}, fmt.Errorf("export validators: %w", err)
	}
	// The restarted chain's first block is the one after the exported state.
	initialHeight := app.LastBlockHeight() + 1
	params := app.BaseApp.GetConsensusParams(ctx)
	if params.Abci != nil {
		abci := *params.Abci
		abci.VoteExtensionsEnableHeight = RestartedVoteExtensionsHeight(abci.VoteExtensionsEnableHeight, initialHeight)
		params.Abci = &abci
	}
	return servertypes.ExportedApp{
		AppState:        appState,
		Validators:      validators,
		Height:          initialHeight,
		ConsensusParams: params,
	}, nil
}

// RestartedVoteExtensionsHeight is the vote_extensions_enable_height of a
// chain restarted at initialHeight from an export of a chain whose height
// was enabled: on from the first block if they were on (a height already
// passed would be below the new chain's first block), still at a future
// height if one was set, off if off.
func RestartedVoteExtensionsHeight(enabled, initialHeight int64) int64 {
	if enabled > 0 && enabled < initialHeight {
		return initialHeight
	}
	return enabled
}
