//go:build sims

package app

import (
	"math/rand"
	"slices"
	"testing"

	abci "github.com/cometbft/cometbft/abci/types"
	cmtproto "github.com/cometbft/cometbft/proto/tendermint/types"
	"github.com/stretchr/testify/require"

	simtestutil "github.com/cosmos/cosmos-sdk/testutil/sims"
	"github.com/cosmos/cosmos-sdk/testutil/simsx"
	simtypes "github.com/cosmos/cosmos-sdk/types/simulation"
	slashingtypes "github.com/cosmos/cosmos-sdk/x/slashing/types"
	stakingtypes "github.com/cosmos/cosmos-sdk/x/staking/types"

	inferencesim "github.com/inferenced/inferenced/x/inference/simulation"
	inferencetypes "github.com/inferenced/inferenced/x/inference/types"
)

// skipPrefixes are the store prefixes the import/export comparison leaves
// out, each because an import rebuilds it differently by design, not
// because it is lost:
var skipPrefixes = map[string][][]byte{
	// x/staking (as the SDK's own simapp skips them): the queues are keyed
	// by completion time and re-inserted by InitGenesis in another order;
	// historical info is not exported (a node keeps its own); the
	// unbonding id counter and its indexes are not exported; the
	// validator-updates item belongs to the block that wrote it.
	stakingtypes.StoreKey: {
		stakingtypes.UnbondingQueueKey, stakingtypes.RedelegationQueueKey, stakingtypes.ValidatorQueueKey,
		stakingtypes.HistoricalInfoKey, stakingtypes.UnbondingIDKey, stakingtypes.UnbondingIndexKey,
		stakingtypes.UnbondingTypeKey, stakingtypes.ValidatorUpdatesKey,
	},
	// x/slashing: the missed-block bitmap is exported as a list of missed
	// heights and stored again in chunks of its own layout.
	slashingtypes.StoreKey: {slashingtypes.ValidatorMissedBlockBitmapKeyPrefix},
	// x/inference (x/inference/keeper/genesis.go, breakerstore/genesis.go):
	//   - 23 streaks: exported inside the records (their effective fields),
	//     absent after an import by design (docs/architecture.md);
	//   - 25 verdict reference: what vote extensions' verdicts are relative
	//     to, deliberately not in genesis (ApplyHealth rewrites it from the
	//     next samples). Neither is written while vote extensions are off,
	//     as in the sim, so both are empty on both sides here.
	// (The prune index, 19, is compared: the import used to re-derive its
	// heights from the genesis params, which this test found differing
	// after a governance change; genesis carries them now,
	// TestPruneHeightsSurviveExportAfterARetentionChange.)
	inferencetypes.StoreKey: {inferencetypes.StreaksKey, inferencetypes.VerdictReferenceKey},
}

// exportImport exports ti's app at its last height and loads the export
// into a fresh app through InitChainer, as a chain restarted from the
// export does. It returns the export and the fresh instance.
func exportImport(tb testing.TB, ti simsx.TestInstance[*App]) (exported []byte, height int64, fresh simsx.TestInstance[*App]) {
	tb.Helper()
	app := ti.App
	exp, err := app.ExportAppStateAndValidators(false, nil, nil)
	require.NoError(tb, err)
	fresh = simsx.NewSimulationAppInstance(tb, ti.Cfg, newSimApp)
	ctx := fresh.App.NewContextLegacy(true, cmtproto.Header{Height: app.LastBlockHeight(), ChainID: ti.Cfg.ChainID})
	_, err = fresh.App.InitChainer(ctx, &abci.RequestInitChain{AppStateBytes: exp.AppState, ChainId: ti.Cfg.ChainID})
	require.NoError(tb, err)
	require.NoError(tb, fresh.App.StoreConsensusParams(ctx, exp.ConsensusParams))
	return exp.AppState, exp.Height, fresh
}

// TestAppImportExport runs the simulation, exports, imports into a fresh
// app and compares every store key by key (less skipPrefixes).
func TestAppImportExport(t *testing.T) {
	simsx.RunWithSeeds(t, newSimApp, setupStateFactory, simSeeds(t), nil,
		func(tb testing.TB, ti simsx.TestInstance[*App], _ []simtypes.Account) {
			_, _, fresh := exportImport(tb, ti)
			a, b := ti.App, fresh.App
			checkInferenceInvariants(tb, a)
			ctxA := a.NewContextLegacy(true, cmtproto.Header{Height: a.LastBlockHeight()})
			ctxB := b.NewContextLegacy(true, cmtproto.Header{Height: a.LastBlockHeight()})
			names := make([]string, 0, len(a.keys))
			for name := range a.keys {
				names = append(names, name)
			}
			slices.Sort(names)
			for _, name := range names {
				diffA, diffB := simtestutil.DiffKVStores(ctxA.KVStore(a.keys[name]), ctxB.KVStore(b.keys[name]), skipPrefixes[name])
				require.Equal(tb, len(diffA), len(diffB), "store %s: unequal sets of differing keys", name)
				require.Empty(tb, diffA, "store %s differs after import:\n%s", name,
					simtestutil.GetSimulationLog(name, a.SimulationManager().StoreDecoders, diffA, diffB))
				tb.Logf("store %s: equal after import", name)
			}
			require.NoError(tb, inferencesim.Invariants(ctxB, b.InferenceKeeper, b.BankKeeper), "x/inference invariants after the import")
		})
}

// TestAppSimulationAfterImport runs the simulation, exports, imports the
// export into a fresh app at the next height (InitChain with
// initial_height, as a chain restarted from an export does) and keeps
// simulating on it with the same accounts and the SDK's operations for
// as many blocks again (continueChain), checking x/inference's
// invariants after each part.
func TestAppSimulationAfterImport(t *testing.T) {
	simsx.RunWithSeeds(t, newSimApp, setupStateFactory, simSeeds(t), nil,
		func(tb testing.TB, ti simsx.TestInstance[*App], accs []simtypes.Account) {
			checkInferenceInvariants(tb, ti.App)
			exp, err := ti.App.ExportAppStateAndValidators(false, nil, nil)
			require.NoError(tb, err)
			lastTime := ti.App.NewContext(true).BlockTime()
			fresh := simsx.NewSimulationAppInstance(tb, ti.Cfg, newSimApp)
			app := fresh.App
			_, err = app.InitChain(&abci.RequestInitChain{
				ChainId: ti.Cfg.ChainID, AppStateBytes: exp.AppState, InitialHeight: exp.Height, // the export's height is the next one's
				Time: lastTime, ConsensusParams: &exp.ConsensusParams,
			})
			require.NoError(tb, err)
			ops := continuationOps(tb, app, ti.Cfg)
			r := rand.New(rand.NewSource(ti.Cfg.Seed + 1))
			continueChain(tb, app, r, accs, ops, ti.Cfg, exp.Height, lastTime)
			require.Equal(tb, exp.Height+int64(ti.Cfg.NumBlocks)-1, app.LastBlockHeight(), "the imported chain went on")
			checkInferenceInvariants(tb, app)
		})
}
