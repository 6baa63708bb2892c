package simulation

import (
	"encoding/json"
	"fmt"

	"github.com/cosmos/cosmos-sdk/types/module"

	"github.com/inferenced/inferenced/x/inference/types"
)

// RandomizedGenState writes x/inference's random genesis: params drawn by
// RandomParams (which Validate accepts) and health bundles in the HEALTH3
// layout from the first block. Participants and transfer agents are not in
// it: they register through the operations, so every bond is moved by
// x/bank and held by the module account from the start; an export after a
// run (TestAppImportExport) is the genesis with all of them.
func RandomizedGenState(simState *module.SimulationState) {
	gs := types.DefaultGenesis()
	gs.Params = RandomParams(simState.Rand)
	bz, err := json.MarshalIndent(gs.Params, "", " ")
	if err != nil {
		panic(fmt.Sprintf("marshal x/inference params: %v", err)) // test tooling
	}
	fmt.Printf("Selected randomly generated x/inference parameters:\n%s\n", bz)
	simState.GenState[types.ModuleName] = simState.Cdc.MustMarshalJSON(gs)
}
