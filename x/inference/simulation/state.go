package simulation

import (
	"context"
	"fmt"
	"math/rand"

	"cosmossdk.io/collections"

	sdk "github.com/cosmos/cosmos-sdk/types"
	simtypes "github.com/cosmos/cosmos-sdk/types/simulation"

	"github.com/inferenced/inferenced/x/inference/agents"
	"github.com/inferenced/inferenced/x/inference/inferences"
	"github.com/inferenced/inferenced/x/inference/keeper"
	"github.com/inferenced/inferenced/x/inference/types"
)

// indexes are read-only views of the inferences' expiry queue (exactly the
// STARTED inferences) and prune index (exactly the closed ones), declared
// over the module store with the keeper's prefixes and key codec: the
// operations pick an inference to finish from them without walking every
// inference. Nothing here writes.
type indexes struct {
	expiry collections.KeySet[inferences.HeightKey]
	prune  collections.KeySet[inferences.HeightKey]
}

func newIndexes(k keeper.Keeper) indexes {
	sb := collections.NewSchemaBuilder(k.StoreService())
	idx := indexes{
		expiry: collections.NewKeySet(sb, types.ExpiryQueuePrefix, "expiry_queue", inferences.HeightKeyCodec),
		prune:  collections.NewKeySet(sb, types.PruneIndexPrefix, "prune_index", inferences.HeightKeyCodec),
	}
	if _, err := sb.Build(); err != nil {
		panic(fmt.Sprintf("x/inference simulation indexes: %v", err)) // wiring error of test tooling
	}
	return idx
}

// pickInference returns a random entry of set (at most the first 1,000
// walked), as (agent, id).
func pickInference(ctx context.Context, r *rand.Rand, set collections.KeySet[inferences.HeightKey]) (sdk.AccAddress, string, bool, error) {
	var keys []inferences.HeightKey
	err := set.Walk(ctx, nil, func(k inferences.HeightKey) (bool, error) {
		keys = append(keys, k)
		return len(keys) >= 1000, nil
	})
	if err != nil || len(keys) == 0 {
		return nil, "", false, err
	}
	k := keys[r.Intn(len(keys))]
	return k.K3(), k.K2(), true, nil
}

// participants are the registered participants (bounded by max_participants).
func participants(ctx context.Context, k keeper.Keeper) ([]types.Participant, error) {
	var out []types.Participant
	err := k.Participants.Walk(ctx, nil, func(_ sdk.AccAddress, p types.Participant) (bool, error) {
		out = append(out, p)
		return false, nil
	})
	return out, err
}

// transferAgents are the registered agents (bounded by max_transfer_agents).
func transferAgents(ctx context.Context, k keeper.Keeper) ([]types.TransferAgent, error) {
	var gs types.GenesisState
	if err := k.Agents().ExportGenesis(ctx, &gs); err != nil {
		return nil, err
	}
	return gs.TransferAgents, nil
}

// mayStart reports whether agent may start inferences now (not leaving,
// not stopped this epoch), as the keeper's Starting decides.
func mayStart(ctx context.Context, k keeper.Keeper, ta types.TransferAgent) (bool, error) {
	params, err := k.Params.Get(ctx)
	if err != nil {
		return false, err
	}
	epoch, err := k.Epoch.Get(ctx)
	if err != nil {
		return false, err
	}
	return agents.View(ta, params, epoch.Index).MayStart, nil
}

// simAccount finds the sim account of a bech32 address.
func simAccount(accs []simtypes.Account, bech string) (simtypes.Account, bool) {
	addr, err := sdk.AccAddressFromBech32(bech)
	if err != nil {
		return simtypes.Account{}, false
	}
	return simtypes.FindAccount(accs, addr)
}

// stranger is a random sim account for which is reports false (a
// non-participant, a non-agent, a non-member), if one turns up in a few
// draws.
func stranger(r *rand.Rand, accs []simtypes.Account, is func(sdk.AccAddress) bool) (simtypes.Account, bool) {
	for range 10 {
		acc, _ := simtypes.RandomAcc(r, accs)
		if !is(acc.Address) {
			return acc, true
		}
	}
	return simtypes.Account{}, false
}
