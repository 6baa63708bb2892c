package keeper_test

import (
	"testing"

	"github.com/cosmos/cosmos-sdk/store/v2/rootmulti"
	storetypes "github.com/cosmos/cosmos-sdk/store/v2/types"
	"github.com/stretchr/testify/require"

	"github.com/inferenced/inferenced/x/inference/types"
)

// storedBytes sums key and value bytes under a collection prefix of the
// module store, as the state (and a genesis of it) holds them.
func (f *fixture) storedBytes(prefix []byte) (keys, bytes int) {
	f.t.Helper()
	rs, ok := f.cms.(*rootmulti.Store)
	require.True(f.t, ok)
	kv := f.ctx.KVStore(rs.StoreKeysByName()[types.StoreKey])
	it := storetypes.KVStorePrefixIterator(kv, prefix)
	defer func() { require.NoError(f.t, it.Close()) }()
	for ; it.Valid(); it.Next() {
		keys++
		bytes += len(it.Key()) + len(it.Value())
	}
	return keys, bytes
}

// TestStoredInferenceBytes measures what one closed inference with typical
// inputs holds in state (its key and value, and its prune-index entry),
// the figure inference_retention_epochs' default is chosen from
// (DefaultInferenceRetentionEpochs): go test -run TestStoredInferenceBytes
// -v ./x/inference/keeper/ prints it.
func TestStoredInferenceBytes(t *testing.T) {
	f := pruneFixture(t, 1)
	f.begin(2)
	const id = "0f8fad5b-d9cb-469f-a165-70867728950e" // a UUID, as gateways name requests
	hash := "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
	_, err := f.msg.StartInference(f.ctx, &types.MsgStartInference{
		Creator: bech(agentByte), Executor: bech(1), InferenceId: id, Model: "m", PromptHash: hash,
	})
	require.NoError(t, err)
	_, err = f.msg.FinishInference(f.ctx, &types.MsgFinishInference{
		Creator: bech(1), TransferAgent: bech(agentByte), InferenceId: id, ResponseHash: hash,
	})
	require.NoError(t, err)
	f.end()
	infKeys, infBytes := f.storedBytes(types.InferencesPrefix)
	idxKeys, idxBytes := f.storedBytes(types.PruneIndexPrefix)
	require.Equal(t, [2]int{1, 1}, [2]int{infKeys, idxKeys})
	// The fixture's model is "m"; a typical name ("llama-3.1-8b-instruct",
	// 21 bytes) adds 20 bytes to the value.
	const typicalModelExtra = 20
	total := infBytes + idxBytes + typicalModelExtra
	t.Logf("one closed inference: %d bytes (inference key+value %d, prune-index entry %d, +%d for a typical model name)",
		total, infBytes, idxBytes, typicalModelExtra)
	// The default's comment and docs state about 420 bytes.
	require.InDelta(t, 420, total, 30, "update DefaultInferenceRetentionEpochs' figure and the docs")
}
