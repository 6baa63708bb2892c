package keeper_test

import (
	"context"

	"cosmossdk.io/collections"
	storetypes "github.com/cosmos/cosmos-sdk/store/v2/types"
	"github.com/stretchr/testify/require"

	sdk "github.com/cosmos/cosmos-sdk/types"

	"github.com/inferenced/inferenced/x/inference/inferences"
	"github.com/inferenced/inferenced/x/inference/keeper"
	"github.com/inferenced/inferenced/x/inference/types"
)

// The inferences' store keeps its collections to itself; these read (and,
// to plant a fault, write) its layout raw, with its own key codecs.

// indexEntries are the entries of an inference index (the expiry queue at
// types.ExpiryQueuePrefix or the prune index at types.PruneIndexPrefix).
func indexEntries(t require.TestingT, ctx context.Context, k keeper.Keeper, prefix collections.Prefix) []inferences.HeightKey {
	store := k.StoreService().OpenKVStore(ctx)
	it, err := store.Iterator(prefix.Bytes(), storetypes.PrefixEndBytes(prefix.Bytes()))
	require.NoError(t, err)
	defer func() { require.NoError(t, it.Close()) }()
	var out []inferences.HeightKey
	for ; it.Valid(); it.Next() {
		_, key, err := inferences.HeightKeyCodec.Decode(it.Key()[len(prefix.Bytes()):])
		require.NoError(t, err)
		out = append(out, key)
	}
	return out
}

// hasIndexEntry reports whether the index at prefix holds (height, id, agent).
func (f *fixture) hasIndexEntry(prefix collections.Prefix, height int64, id string, agent sdk.AccAddress) bool {
	for _, e := range indexEntries(f.t, f.ctx, *f.k, prefix) {
		if e.K1() == height && e.K2() == id && e.K3().Equals(agent) {
			return true
		}
	}
	return false
}

// setIndexEntry writes an index entry raw, as a store fault would leave it.
func setIndexEntry(t require.TestingT, ctx context.Context, k keeper.Keeper, prefix collections.Prefix, e inferences.HeightKey) {
	bz := make([]byte, inferences.HeightKeyCodec.Size(e))
	_, err := inferences.HeightKeyCodec.Encode(bz, e)
	require.NoError(t, err)
	require.NoError(t, k.StoreService().OpenKVStore(ctx).Set(append(slicesClone(prefix), bz...), []byte{}))
}

// deleteInference removes an inference raw, as a store fault would.
func deleteInference(t require.TestingT, ctx context.Context, k keeper.Keeper, key inferences.Key) {
	bz := make([]byte, inferences.KeyCodec.Size(key))
	_, err := inferences.KeyCodec.Encode(bz, key)
	require.NoError(t, err)
	require.NoError(t, k.StoreService().OpenKVStore(ctx).Delete(append(slicesClone(types.InferencesPrefix), bz...)))
}

// storedInferencesOf are the retained inferences, in key order, and the
// last height that pruned anything (0: none).
func storedInferencesOf(t require.TestingT, ctx context.Context, k keeper.Keeper) ([]types.Inference, int64) {
	var gs types.GenesisState
	require.NoError(t, k.Inferences().ExportGenesis(ctx, &gs))
	return gs.Inferences, gs.InferencesPrunedThrough
}

func slicesClone(p collections.Prefix) []byte { return append([]byte{}, p.Bytes()...) }
