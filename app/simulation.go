package app

import (
	"github.com/cosmos/cosmos-sdk/baseapp"
	"github.com/cosmos/cosmos-sdk/types/module"
	"github.com/cosmos/cosmos-sdk/x/auth"
	authtypes "github.com/cosmos/cosmos-sdk/x/auth/types"

	inference "github.com/inferenced/inferenced/x/inference/module"
	inferencetypes "github.com/inferenced/inferenced/x/inference/types"
)

// initSimulation builds the SimulationManager: every module of the app
// that supports the SDK's simulation (auth, bank, distribution, gov,
// slashing, staking) and x/inference. auth is rebuilt with the random
// genesis accounts function (the app's own has none), x/inference with the
// keepers its operations sign and read balances with. genutil, upgrade and
// consensus have no simulation. The manager is test tooling: nothing on a
// node calls it.
func (app *App) initSimulation() {
	overrides := map[string]module.AppModuleSimulation{
		authtypes.ModuleName: auth.NewAppModule(app.appCodec, app.AccountKeeper, baseGenesisAccounts),
		inferencetypes.ModuleName: inference.NewSimulationModule(
			inference.NewAppModule(app.appCodec, app.InferenceKeeper, app.Routes), app.AccountKeeper, app.BankKeeper),
	}
	app.sm = module.NewSimulationManagerFromAppModules(app.ModuleManager.Modules, overrides)
	app.sm.RegisterStoreDecoders()
}

// baseGenesisAccounts are the sim accounts as plain base accounts. The
// SDK's RandomGenesisAccounts makes some of them vesting accounts, a type
// this chain does not register (it has no x/auth/vesting).
func baseGenesisAccounts(simState *module.SimulationState) authtypes.GenesisAccounts {
	accs := make(authtypes.GenesisAccounts, len(simState.Accounts))
	for i, acc := range simState.Accounts {
		accs[i] = authtypes.NewBaseAccountWithAddress(acc.Address)
	}
	return accs
}

// SimulationManager is the app's simulation manager (make test-sim).
func (app *App) SimulationManager() *module.SimulationManager { return app.sm }

// GetBaseApp returns the base app, for the simulation harness.
func (app *App) GetBaseApp() *baseapp.BaseApp { return app.BaseApp }
