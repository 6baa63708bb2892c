package module_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	moduletestutil "github.com/cosmos/cosmos-sdk/types/module/testutil"

	"github.com/inferenced/inferenced/x/inference/module"
	"github.com/inferenced/inferenced/x/inference/routes"
	"github.com/inferenced/inferenced/x/inference/testutil"
	"github.com/inferenced/inferenced/x/inference/types"
)

// The module validates genesis JSON with the chain's address codec: the
// default genesis passes, a group out of address order and malformed JSON
// do not.
func TestModuleGenesisJSONValidates(t *testing.T) {
	enc := moduletestutil.MakeTestEncodingConfig(module.AppModule{})
	k, _ := testutil.Keeper(t)
	am := module.NewAppModule(enc.Codec, k, routes.New(k))
	require.NoError(t, am.ValidateGenesis(enc.Codec, nil, am.DefaultGenesis(enc.Codec)))

	p := types.DefaultParams()
	var members []types.EpochMember
	var participants []types.Participant
	for _, b := range []byte{2, 1} {
		addr := make([]byte, 20)
		addr[19] = b
		s, err := testutil.AddressCodec.BytesToString(addr)
		require.NoError(t, err)
		participants = append(participants, types.Participant{
			Address: s, InferenceUrl: "http://e.example/", Models: []string{"m"}, Weight: 100,
			Status: types.PARTICIPANT_STATUS_ACTIVE, Bond: types.BondForWeight(100, p),
		})
		members = append(members, types.EpochMember{Address: s, InferenceUrl: "http://e.example/", Models: []string{"m"}, Weight: 100})
	}
	gs := types.DefaultGenesis()
	gs.Participants = []types.Participant{participants[1], participants[0]}
	gs.Epoch = &types.Epoch{Index: 1, StartHeight: 1, Members: 2}
	gs.EpochGroup = &types.EpochGroup{EpochIndex: 1, Members: []types.EpochMember{members[1], members[0]}}
	require.NoError(t, am.ValidateGenesis(enc.Codec, nil, enc.Codec.MustMarshalJSON(gs)), "the group in address order")
	gs.EpochGroup.Members = members
	require.ErrorContains(t, am.ValidateGenesis(enc.Codec, nil, enc.Codec.MustMarshalJSON(gs)), "sorted by address bytes")
	require.Error(t, am.ValidateGenesis(enc.Codec, nil, []byte(`{"params":`)))
}
