//go:build sims

package app

import (
	"flag"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"cosmossdk.io/log/v2"
	dbm "github.com/cosmos/cosmos-db"
	"github.com/stretchr/testify/require"

	"github.com/cosmos/cosmos-sdk/baseapp"
	servertypes "github.com/cosmos/cosmos-sdk/server/types"
	simtestutil "github.com/cosmos/cosmos-sdk/testutil/sims"
	"github.com/cosmos/cosmos-sdk/testutil/simsx"
	simcli "github.com/cosmos/cosmos-sdk/x/simulation/client/cli"

	inferencesim "github.com/inferenced/inferenced/x/inference/simulation"
)

// The simulation tests (make test-sim, make test-sim-long) run with the
// build tag sims, as the SDK's own simapp does, and take the SDK's
// simulator flags (-NumBlocks, -BlockSize, -Commit, -GenesisTime, ...)
// plus -SimSeeds, the seeds each test runs. Vote extensions stay off: the
// harness calls FinalizeBlock without PrepareProposal/ProcessProposal or
// vote extensions, and its random consensus params carry no ABCI params
// (vote_extensions_enable_height 0), so the pre-blocker runs the breaker's
// step with no attested samples, as on a chain before attestation.
var flagSimSeeds = flag.String("SimSeeds", "1,7", "comma-separated seeds each simulation test runs")

func init() {
	simcli.GetSimulatorFlags()
}

// simParamsFile is the sim params file the tests use unless -Params names
// another: it turns off x/gov's legacy text proposals, which this chain
// refuses (no legacy proposal handler; TestLegacyProposalIsRefusedWithoutPanic)
// and x/gov's operation would count as a failure.
const simParamsFile = "testdata/sim_params.json"

// simSeeds parses -SimSeeds (and sets the default params file).
func simSeeds(tb testing.TB) []int64 {
	tb.Helper()
	if simcli.FlagParamsFileValue == "" && simcli.FlagGenesisFileValue == "" {
		simcli.FlagParamsFileValue = simParamsFile
	}
	var seeds []int64
	for _, s := range strings.Split(*flagSimSeeds, ",") {
		seed, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
		require.NoError(tb, err, "-SimSeeds %q", *flagSimSeeds)
		seeds = append(seeds, seed)
	}
	return seeds
}

// newSimApp is New with the signature the harness takes.
func newSimApp(logger log.Logger, db dbm.DB, loadLatest bool,
	appOpts servertypes.AppOptions, baseAppOptions ...func(*baseapp.BaseApp),
) *App {
	app, err := New(logger, db, loadLatest, appOpts, baseAppOptions...)
	if err != nil {
		panic(fmt.Sprintf("new app: %v", err))
	}
	return app
}

// setupStateFactory is where the harness gets its genesis and accounts:
// every module's random genesis over the app's default one.
func setupStateFactory(app *App) simsx.SimStateFactory {
	return simsx.SimStateFactory{
		Codec:         app.AppCodec(),
		AppStateFn:    simtestutil.AppStateFn(app.AppCodec(), app.SimulationManager(), app.DefaultGenesis()),
		BlockedAddr:   blockedAddresses(),
		AccountSource: app.AccountKeeper,
		BalanceSource: app.BankKeeper,
	}
}

// checkInferenceInvariants runs x/inference's invariants on the last
// committed state.
func checkInferenceInvariants(tb testing.TB, app *App) {
	tb.Helper()
	ctx := app.NewContext(true)
	require.NoError(tb, inferencesim.Invariants(ctx, app.InferenceKeeper, app.BankKeeper), "x/inference invariants at height %d", app.LastBlockHeight())
	gs, err := app.InferenceKeeper.ExportGenesis(ctx)
	require.NoError(tb, err)
	statuses := map[string]int{}
	for _, inf := range gs.Inferences {
		statuses[inf.Status.String()]++
	}
	states := map[string]int{}
	for _, h := range gs.ExecutorHealth {
		states[h.State.String()]++
	}
	epoch := uint64(0)
	if gs.Epoch != nil {
		epoch = gs.Epoch.Index
	}
	tb.Logf("x/inference at height %d: epoch %d, %d participants, %d transfer agents, inferences %v, breaker records %v, %d pending samples",
		app.LastBlockHeight(), epoch, len(gs.Participants), len(gs.TransferAgents), statuses, states, len(gs.PendingSamples))
}
