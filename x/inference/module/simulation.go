package module

import (
	"github.com/cosmos/cosmos-sdk/types/module"
	simtypes "github.com/cosmos/cosmos-sdk/types/simulation"

	"github.com/inferenced/inferenced/x/inference/simulation"
	"github.com/inferenced/inferenced/x/inference/types"
)

var _ module.AppModuleSimulation = SimulationModule{}

// SimulationModule is the module as the SDK's simulation sees it: the
// AppModule with the account and bank keepers its operations sign and
// read balances with. The app puts it in its SimulationManager.
type SimulationModule struct {
	AppModule
	ak simulation.AccountKeeper
	bk simulation.BankKeeper
}

// NewSimulationModule wraps am for the simulation manager.
func NewSimulationModule(am AppModule, ak simulation.AccountKeeper, bk simulation.BankKeeper) SimulationModule {
	return SimulationModule{AppModule: am, ak: ak, bk: bk}
}

// GenerateGenesisState draws a random genesis (params that Validate accepts).
func (SimulationModule) GenerateGenesisState(simState *module.SimulationState) {
	simulation.RandomizedGenState(simState)
}

// RegisterStoreDecoder decodes the module's store for the import/export
// comparison's diff, from the collections schema.
func (am SimulationModule) RegisterStoreDecoder(sdr simtypes.StoreDecoderRegistry) {
	sdr[types.StoreKey] = simtypes.NewStoreDecoderFuncFromCollectionsSchema(am.keeper.Schema)
}

// ProposalMsgs are the governance proposals of the module (MsgUpdateParams).
func (SimulationModule) ProposalMsgs(module.SimulationState) []simtypes.WeightedProposalMsg {
	return simulation.ProposalMsgs()
}

// WeightedOperations are the module's operations, one per message.
func (am SimulationModule) WeightedOperations(simState module.SimulationState) []simtypes.WeightedOperation {
	return simulation.WeightedOperations(simState, am.keeper, am.ak, am.bk)
}
