// Package app wires the inferenced application: the standard Cosmos SDK
// modules plus x/inference, with manual keeper construction so that the
// ABCI++ handlers can be wrapped explicitly.
package app

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	autocliv1 "cosmossdk.io/api/cosmos/autocli/v1"
	reflectionv1 "cosmossdk.io/api/cosmos/reflection/v1"
	corestore "cosmossdk.io/core/store"
	"cosmossdk.io/log/v2"
	abci "github.com/cometbft/cometbft/abci/types"
	dbm "github.com/cosmos/cosmos-db"
	storetypes "github.com/cosmos/cosmos-sdk/store/v2/types"
	"github.com/cosmos/cosmos-sdk/x/upgrade"
	upgradekeeper "github.com/cosmos/cosmos-sdk/x/upgrade/keeper"
	upgradetypes "github.com/cosmos/cosmos-sdk/x/upgrade/types"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/spf13/cast"

	"github.com/cosmos/cosmos-sdk/baseapp"
	"github.com/cosmos/cosmos-sdk/client"
	"github.com/cosmos/cosmos-sdk/codec"
	"github.com/cosmos/cosmos-sdk/codec/address"
	"github.com/cosmos/cosmos-sdk/codec/types"
	"github.com/cosmos/cosmos-sdk/runtime"
	runtimeservices "github.com/cosmos/cosmos-sdk/runtime/services"
	"github.com/cosmos/cosmos-sdk/server"
	servertypes "github.com/cosmos/cosmos-sdk/server/types"
	"github.com/cosmos/cosmos-sdk/std"
	sdk "github.com/cosmos/cosmos-sdk/types"
	"github.com/cosmos/cosmos-sdk/types/module"
	"github.com/cosmos/cosmos-sdk/version"
	"github.com/cosmos/cosmos-sdk/x/auth"
	"github.com/cosmos/cosmos-sdk/x/auth/ante"
	authkeeper "github.com/cosmos/cosmos-sdk/x/auth/keeper"
	authtx "github.com/cosmos/cosmos-sdk/x/auth/tx"
	authtypes "github.com/cosmos/cosmos-sdk/x/auth/types"
	"github.com/cosmos/cosmos-sdk/x/bank"
	bankkeeper "github.com/cosmos/cosmos-sdk/x/bank/keeper"
	banktypes "github.com/cosmos/cosmos-sdk/x/bank/types"
	"github.com/cosmos/cosmos-sdk/x/consensus"
	consensuskeeper "github.com/cosmos/cosmos-sdk/x/consensus/keeper"
	consensustypes "github.com/cosmos/cosmos-sdk/x/consensus/types"
	distr "github.com/cosmos/cosmos-sdk/x/distribution"
	distrkeeper "github.com/cosmos/cosmos-sdk/x/distribution/keeper"
	distrtypes "github.com/cosmos/cosmos-sdk/x/distribution/types"
	"github.com/cosmos/cosmos-sdk/x/genutil"
	genutiltypes "github.com/cosmos/cosmos-sdk/x/genutil/types"
	"github.com/cosmos/cosmos-sdk/x/gov"
	govclient "github.com/cosmos/cosmos-sdk/x/gov/client"
	govkeeper "github.com/cosmos/cosmos-sdk/x/gov/keeper"
	govtypes "github.com/cosmos/cosmos-sdk/x/gov/types"
	govv1beta1 "github.com/cosmos/cosmos-sdk/x/gov/types/v1beta1"
	"github.com/cosmos/cosmos-sdk/x/slashing"
	slashingkeeper "github.com/cosmos/cosmos-sdk/x/slashing/keeper"
	slashingtypes "github.com/cosmos/cosmos-sdk/x/slashing/types"
	"github.com/cosmos/cosmos-sdk/x/staking"
	stakingkeeper "github.com/cosmos/cosmos-sdk/x/staking/keeper"
	stakingtypes "github.com/cosmos/cosmos-sdk/x/staking/types"

	"github.com/inferenced/inferenced/monitor"
	inferencekeeper "github.com/inferenced/inferenced/x/inference/keeper"
	inference "github.com/inferenced/inferenced/x/inference/module"
	inferenceroutes "github.com/inferenced/inferenced/x/inference/routes"
	inferencetypes "github.com/inferenced/inferenced/x/inference/types"
)

// DefaultNodeHome is the default home of the node and CLI.
var DefaultNodeHome = defaultNodeHome()

func defaultNodeHome() string {
	home, err := os.UserHomeDir()
	if err != nil {
		return "." + Name
	}
	return filepath.Join(home, "."+Name)
}

// maccPerms are the module accounts and their permissions.
var maccPerms = map[string][]string{
	authtypes.FeeCollectorName:     nil,
	distrtypes.ModuleName:          nil,
	stakingtypes.BondedPoolName:    {authtypes.Burner, authtypes.Staking},
	stakingtypes.NotBondedPoolName: {authtypes.Burner, authtypes.Staking},
	govtypes.ModuleName:            {authtypes.Burner},
	// x/staking burns consensus-key rotation fees through it (SDK v0.55;
	// its keeper refuses to start without it).
	stakingtypes.KeyRotationFeePoolName: {authtypes.Burner},
	// x/inference only holds transfer-agent bonds: no minting or burning.
	inferencetypes.ModuleName: nil,
}

var _ servertypes.Application = (*App)(nil)

// App is the inferenced application.
type App struct {
	*baseapp.BaseApp

	healthMonitor *monitor.Lazy           // nil when [health-monitor] is disabled
	routeWarmer   *inferenceroutes.Warmer // builds the query path's route tables after each commit
	// The SDK's start command closes the app twice (CometBFT's cleanup,
	// then its own): the second call returns the first's result.
	closeOnce sync.Once
	closeErr  error

	legacyAmino       *codec.LegacyAmino
	appCodec          codec.Codec
	txConfig          client.TxConfig
	interfaceRegistry types.InterfaceRegistry
	keys              map[string]*storetypes.KVStoreKey

	AccountKeeper         authkeeper.AccountKeeper
	BankKeeper            bankkeeper.BaseKeeper
	StakingKeeper         *stakingkeeper.Keeper
	SlashingKeeper        slashingkeeper.Keeper
	DistrKeeper           distrkeeper.Keeper
	GovKeeper             govkeeper.Keeper
	UpgradeKeeper         *upgradekeeper.Keeper
	ConsensusParamsKeeper consensuskeeper.Keeper
	InferenceKeeper       inferencekeeper.Keeper
	// Routes answers GetRandomExecutor from route tables kept per
	// committed height (node memory).
	Routes *inferenceroutes.Routes

	ModuleManager      *module.Manager
	BasicModuleManager module.BasicManager
	configurator       module.Configurator
	sm                 *module.SimulationManager // simulation.go
}

// New builds the application.
func New(
	logger log.Logger, db dbm.DB, loadLatest bool,
	appOpts servertypes.AppOptions, baseAppOptions ...func(*baseapp.BaseApp),
) (*App, error) {
	interfaceRegistry, err := NewInterfaceRegistry()
	if err != nil {
		return nil, err
	}
	appCodec := codec.NewProtoCodec(interfaceRegistry)
	legacyAmino := codec.NewLegacyAmino()
	txConfig := authtx.NewTxConfig(appCodec, authtx.DefaultSignModes)
	std.RegisterLegacyAminoCodec(legacyAmino)
	std.RegisterInterfaces(interfaceRegistry)

	bApp := baseapp.NewBaseApp(Name, logger, db, txConfig.TxDecoder(), baseAppOptions...)
	bApp.SetVersion(version.Version)
	bApp.SetInterfaceRegistry(interfaceRegistry)
	bApp.SetTxEncoder(txConfig.TxEncoder())

	keys := storetypes.NewKVStoreKeys(
		authtypes.StoreKey, banktypes.StoreKey, stakingtypes.StoreKey, distrtypes.StoreKey,
		slashingtypes.StoreKey, govtypes.StoreKey, upgradetypes.StoreKey, consensustypes.StoreKey,
		inferencetypes.StoreKey,
	)
	if err := registerMetrics(appOpts, logger, prometheus.DefaultRegisterer); err != nil {
		return nil, err
	}
	app := &App{
		BaseApp:           bApp,
		legacyAmino:       legacyAmino,
		appCodec:          appCodec,
		txConfig:          txConfig,
		interfaceRegistry: interfaceRegistry,
		keys:              keys,
	}
	if err := app.initKeepers(appOpts, logger); err != nil {
		return nil, err
	}
	if err := app.initModules(); err != nil {
		return nil, err
	}
	app.registerUpgrades()
	app.initSimulation()

	app.MountKVStores(keys)
	app.SetInitChainer(app.InitChainer)
	if err := app.setHandlers(appOpts, logger); err != nil {
		return nil, fmt.Errorf("health attestation: %w", err)
	}
	app.SetBeginBlocker(app.BeginBlocker)
	app.SetEndBlocker(app.EndBlocker)
	anteHandler, err := ante.NewAnteHandler(ante.HandlerOptions{
		AccountKeeper:   app.AccountKeeper,
		BankKeeper:      app.BankKeeper,
		SignModeHandler: txConfig.SignModeHandler(),
		SigGasConsumer:  ante.DefaultSigVerificationGasConsumer,
	})
	if err != nil {
		return nil, fmt.Errorf("ante handler: %w", err)
	}
	app.SetAnteHandler(anteHandler)

	if loadLatest {
		if err := app.LoadLatestVersion(); err != nil {
			return nil, fmt.Errorf("load latest version: %w", err)
		}
	}
	return app, nil
}

func (app *App) initKeepers(appOpts servertypes.AppOptions, logger log.Logger) error {
	authority := authtypes.NewModuleAddress(govtypes.ModuleName).String()
	kv := func(key string) corestore.KVStoreService { return runtime.NewKVStoreService(app.keys[key]) }

	app.ConsensusParamsKeeper = consensuskeeper.NewKeeper(app.appCodec, kv(consensustypes.StoreKey), authority, runtime.EventService{})
	app.SetParamStore(app.ConsensusParamsKeeper.ParamsStore)

	app.AccountKeeper = authkeeper.NewAccountKeeper(app.appCodec, kv(authtypes.StoreKey), authtypes.ProtoBaseAccount,
		maccPerms, address.NewBech32Codec(sdk.GetConfig().GetBech32AccountAddrPrefix()),
		sdk.GetConfig().GetBech32AccountAddrPrefix(), authority)
	app.BankKeeper = bankkeeper.NewBaseKeeper(app.appCodec, kv(banktypes.StoreKey), app.AccountKeeper,
		blockedAddresses(), authority, logger)
	app.StakingKeeper = stakingkeeper.NewKeeper(app.appCodec, kv(stakingtypes.StoreKey), app.AccountKeeper, app.BankKeeper,
		authority, address.NewBech32Codec(sdk.GetConfig().GetBech32ValidatorAddrPrefix()),
		address.NewBech32Codec(sdk.GetConfig().GetBech32ConsensusAddrPrefix()))
	app.DistrKeeper = distrkeeper.NewKeeper(app.appCodec, kv(distrtypes.StoreKey), app.AccountKeeper, app.BankKeeper,
		app.StakingKeeper, authtypes.FeeCollectorName, authority)
	app.SlashingKeeper = slashingkeeper.NewKeeper(app.appCodec, app.legacyAmino, kv(slashingtypes.StoreKey),
		app.StakingKeeper, authority)
	app.StakingKeeper.SetHooks(stakingtypes.NewMultiStakingHooks(app.DistrKeeper.Hooks(), app.SlashingKeeper.Hooks()))

	skipUpgradeHeights := map[int64]bool{}
	for _, h := range cast.ToIntSlice(appOpts.Get(server.FlagUnsafeSkipUpgrades)) {
		skipUpgradeHeights[int64(h)] = true
	}
	homePath, _ := appOpts.Get("home").(string)
	app.UpgradeKeeper = upgradekeeper.NewKeeper(skipUpgradeHeights, kv(upgradetypes.StoreKey), app.appCodec,
		homePath, app.BaseApp, authority)

	govKeeper := govkeeper.NewKeeper(app.appCodec, kv(govtypes.StoreKey), app.AccountKeeper, app.BankKeeper,
		app.DistrKeeper, app.MsgServiceRouter(), govtypes.DefaultConfig(), authority,
		govkeeper.NewDefaultCalculateVoteResultsAndVotingPower(app.StakingKeeper))
	// No legacy (v1beta1 content) proposal has a handler: an empty router (sealed
	// by x/gov) refuses them, where a nil one panicked (TestLegacyProposalIsRefusedWithoutPanic).
	govKeeper.SetLegacyRouter(govv1beta1.NewRouter())
	app.GovKeeper = *govKeeper

	inferenceKeeper, err := inferencekeeper.NewKeeper(app.appCodec, kv(inferencetypes.StoreKey),
		app.AccountKeeper.AddressCodec(), authority, app.BankKeeper)
	if err != nil {
		return fmt.Errorf("inference keeper: %w", err)
	}
	app.InferenceKeeper = inferenceKeeper
	app.Routes = inferenceroutes.New(inferenceKeeper)
	return nil
}

func (app *App) initModules() error {
	app.ModuleManager = module.NewManager(
		genutil.NewAppModule(app.AccountKeeper, app.StakingKeeper, app, app.txConfig),
		auth.NewAppModule(app.appCodec, app.AccountKeeper, nil),
		bank.NewAppModule(app.appCodec, app.BankKeeper, app.AccountKeeper),
		gov.NewAppModule(app.appCodec, &app.GovKeeper, app.AccountKeeper, app.BankKeeper),
		slashing.NewAppModule(app.appCodec, app.SlashingKeeper, app.AccountKeeper, app.BankKeeper, app.StakingKeeper, app.interfaceRegistry),
		distr.NewAppModule(app.appCodec, app.DistrKeeper, app.AccountKeeper, app.BankKeeper, app.StakingKeeper),
		staking.NewAppModule(app.appCodec, app.StakingKeeper, app.AccountKeeper, app.BankKeeper),
		upgrade.NewAppModule(app.UpgradeKeeper, app.AccountKeeper.AddressCodec()),
		consensus.NewAppModule(app.appCodec, app.ConsensusParamsKeeper),
		inference.NewAppModule(app.appCodec, app.InferenceKeeper, app.Routes),
	)
	app.BasicModuleManager = module.NewBasicManagerFromManager(app.ModuleManager, map[string]module.AppModuleBasic{
		genutiltypes.ModuleName: genutil.NewAppModuleBasic(genutiltypes.DefaultMessageValidator),
		govtypes.ModuleName:     gov.NewAppModuleBasic([]govclient.ProposalHandler{}),
	})
	app.BasicModuleManager.RegisterLegacyAminoCodec(app.legacyAmino)
	app.BasicModuleManager.RegisterInterfaces(app.interfaceRegistry)

	app.ModuleManager.SetOrderPreBlockers(upgradetypes.ModuleName, authtypes.ModuleName)
	app.ModuleManager.SetOrderBeginBlockers(distrtypes.ModuleName, slashingtypes.ModuleName, stakingtypes.ModuleName,
		inferencetypes.ModuleName)
	// x/bank first: its end-blocker finalizes what the block's
	// transactions wrote to its object store (SDK v0.54+).
	app.ModuleManager.SetOrderEndBlockers(banktypes.ModuleName, govtypes.ModuleName, stakingtypes.ModuleName,
		inferencetypes.ModuleName)
	// x/bank comes before x/inference, which checks at import that its
	// module account holds the transfer-agent bonds.
	genesisOrder := []string{
		authtypes.ModuleName, banktypes.ModuleName, distrtypes.ModuleName, stakingtypes.ModuleName,
		slashingtypes.ModuleName, govtypes.ModuleName, genutiltypes.ModuleName, upgradetypes.ModuleName,
		consensustypes.ModuleName, inferencetypes.ModuleName,
	}
	app.ModuleManager.SetOrderInitGenesis(genesisOrder...)
	app.ModuleManager.SetOrderExportGenesis(genesisOrder...)

	app.configurator = module.NewConfigurator(app.appCodec, app.MsgServiceRouter(), app.GRPCQueryRouter())
	if err := app.ModuleManager.RegisterServices(app.configurator); err != nil {
		return fmt.Errorf("register services: %w", err)
	}
	autocliv1.RegisterQueryServer(app.GRPCQueryRouter(), runtimeservices.NewAutoCLIQueryService(app.ModuleManager.Modules))
	reflectionSvc, err := runtimeservices.NewReflectionService()
	if err != nil {
		return fmt.Errorf("reflection service: %w", err)
	}
	reflectionv1.RegisterReflectionServiceServer(app.GRPCQueryRouter(), reflectionSvc)
	return nil
}

// Name returns the app name.
func (app *App) Name() string { return app.BaseApp.Name() }

// BeginBlocker runs the modules' begin-blockers.
func (app *App) BeginBlocker(ctx sdk.Context) (sdk.BeginBlock, error) {
	return app.ModuleManager.BeginBlock(ctx)
}

// EndBlocker runs the modules' end-blockers.
func (app *App) EndBlocker(ctx sdk.Context) (sdk.EndBlock, error) {
	return app.ModuleManager.EndBlock(ctx)
}

// InitChainer loads the genesis state.
func (app *App) InitChainer(ctx sdk.Context, req *abci.RequestInitChain) (*abci.ResponseInitChain, error) {
	var genesisState map[string]json.RawMessage
	if err := json.Unmarshal(req.AppStateBytes, &genesisState); err != nil {
		return nil, fmt.Errorf("decode app genesis: %w", err)
	}
	if err := app.UpgradeKeeper.SetModuleVersionMap(ctx, app.ModuleManager.GetVersionMap()); err != nil {
		return nil, fmt.Errorf("set module versions: %w", err)
	}
	return app.ModuleManager.InitGenesis(ctx, app.appCodec, genesisState)
}

// LoadHeight loads the state at a height.
func (app *App) LoadHeight(height int64) error { return app.LoadVersion(height) }

// LegacyAmino returns the amino codec.
func (app *App) LegacyAmino() *codec.LegacyAmino { return app.legacyAmino }

// AppCodec returns the proto codec.
func (app *App) AppCodec() codec.Codec { return app.appCodec }

// InterfaceRegistry returns the interface registry.
func (app *App) InterfaceRegistry() types.InterfaceRegistry { return app.interfaceRegistry }

// TxConfig returns the tx config.
func (app *App) TxConfig() client.TxConfig { return app.txConfig }

// DefaultGenesis returns the default genesis of every module.
func (app *App) DefaultGenesis() map[string]json.RawMessage {
	return app.BasicModuleManager.DefaultGenesis(app.appCodec)
}

// blockedAddresses are the module accounts that may not receive funds.
func blockedAddresses() map[string]bool {
	blocked := make(map[string]bool, len(maccPerms))
	for name := range maccPerms {
		blocked[authtypes.NewModuleAddress(name).String()] = true
	}
	return blocked
}
