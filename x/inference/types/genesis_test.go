package types_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	addresscodec "github.com/cosmos/cosmos-sdk/codec/address"

	"github.com/inferenced/inferenced/x/inference/types"
)

var ac = addresscodec.NewBech32Codec("infer")

func bech(i byte) string {
	s, err := ac.BytesToString(bytes.Repeat([]byte{i}, 20))
	if err != nil {
		panic(err)
	}
	return s
}

func participant(i byte, models ...string) types.Participant {
	return types.Participant{
		Address: bech(i), InferenceUrl: "http://node.example/", Models: models, Weight: uint64(i),
		Status: types.PARTICIPANT_STATUS_ACTIVE, Bond: types.BondForWeight(uint64(i), types.DefaultParams()),
	}
}

func member(i byte, models ...string) types.EpochMember {
	return types.EpochMember{Address: bech(i), Weight: uint64(i), Models: models, InferenceUrl: "http://node.example/"}
}

// validGenesis has two participants, a group of both, and one inference.
func validGenesis() types.GenesisState {
	return types.GenesisState{
		Params:       types.DefaultParams(),
		Participants: []types.Participant{participant(1, "a", "b"), participant(2, "a")},
		Epoch:        &types.Epoch{Index: 2, StartHeight: 10, Members: 2},
		EpochGroup:   &types.EpochGroup{EpochIndex: 2, Members: []types.EpochMember{member(1, "a", "b"), member(2, "a")}},
		Inferences: []types.Inference{{
			InferenceId: "i-1", Model: "a", TransferAgent: bech(9), Executor: bech(1),
			Status: types.INFERENCE_STATUS_STARTED, EpochIndex: 2, StartHeight: 11, ExpirationHeight: 21,
		}},
	}
}

func TestDefaultGenesisValidates(t *testing.T) {
	require.NoError(t, types.DefaultGenesis().Validate(ac))
	require.NoError(t, validGenesis().Validate(ac))
}

func TestGenesisValidateAcceptsEveryStatusAndNoEpoch(t *testing.T) {
	gs := validGenesis()
	gs.Participants[1].Status = types.PARTICIPANT_STATUS_INACTIVE
	gs.Participants = append(gs.Participants, participant(3, "a"))
	gs.Participants[2].Status = types.PARTICIPANT_STATUS_INVALID
	for _, s := range []types.InferenceStatus{types.INFERENCE_STATUS_FINISHED, types.INFERENCE_STATUS_EXPIRED} {
		inf := gs.Inferences[0]
		inf.InferenceId, inf.Status, inf.EndHeight = "i-"+s.String(), s, 15
		gs.Inferences = append(gs.Inferences, inf)
	}
	require.NoError(t, gs.Validate(ac))

	gs.Epoch, gs.EpochGroup = nil, nil
	require.NoError(t, gs.Validate(ac), "participants without an epoch yet")
}

func TestGenesisValidateRejects(t *testing.T) {
	cases := []struct {
		name    string
		edit    func(*types.GenesisState)
		mention string
	}{
		{"invalid params", func(gs *types.GenesisState) { gs.Params.EpochLength = 0 }, "params"},
		{"more participants than max_participants", func(gs *types.GenesisState) {
			gs.Params.MaxParticipants = uint64(len(gs.Participants) - 1)
		}, "max_participants"},
		{"duplicate participant", func(gs *types.GenesisState) {
			gs.Participants = append(gs.Participants, gs.Participants[0])
		}, "twice"},
		{"duplicate participant in upper case", func(gs *types.GenesisState) {
			p := gs.Participants[0]
			p.Address = strings.ToUpper(p.Address)
			gs.Participants = append(gs.Participants, p)
		}, "canonical"},
		{"group member in upper case", func(gs *types.GenesisState) {
			gs.EpochGroup.Members[0].Address = strings.ToUpper(gs.EpochGroup.Members[0].Address)
		}, "canonical"},
		{"participant bad address", func(gs *types.GenesisState) { gs.Participants[0].Address = "infer1nope" }, "address"},
		{"participant wrong prefix", func(gs *types.GenesisState) {
			other, _ := addresscodec.NewBech32Codec("cosmos").BytesToString(bytes.Repeat([]byte{7}, 20))
			gs.Participants[0].Address = other
		}, "address"},
		{"participant bad url", func(gs *types.GenesisState) { gs.Participants[0].InferenceUrl = "ftp://x/" }, "inference_url"},
		{"participant unsorted models", func(gs *types.GenesisState) { gs.Participants[0].Models = []string{"b", "a"} }, "sorted"},
		{"participant no models", func(gs *types.GenesisState) { gs.Participants[0].Models = nil }, "model"},
		{"participant weight over max", func(gs *types.GenesisState) {
			gs.Participants[0].Weight = types.MaxParticipantWeight + 1
		}, "weight"},
		{"participant status unspecified", func(gs *types.GenesisState) { gs.Participants[0].Status = 0 }, "status"},
		{"participant status unknown", func(gs *types.GenesisState) { gs.Participants[0].Status = 42 }, "status"},
		{"epoch_group without epoch", func(gs *types.GenesisState) { gs.Epoch = nil }, "epoch_group"},
		{"epoch_group of another epoch", func(gs *types.GenesisState) { gs.EpochGroup.EpochIndex = 1 }, "epoch_group"},
		{"epoch index 0", func(gs *types.GenesisState) { gs.Epoch.Index, gs.EpochGroup.EpochIndex = 0, 0 }, "epoch index"},
		{"epoch negative start", func(gs *types.GenesisState) { gs.Epoch.StartHeight = -1 }, "start_height"},
		{"epoch members other than its group", func(gs *types.GenesisState) { gs.Epoch.Members = 3 }, "epoch members"},
		{"epoch members without a group", func(gs *types.GenesisState) { gs.EpochGroup = nil }, "epoch members"},
		{"group unsorted", func(gs *types.GenesisState) {
			m := gs.EpochGroup.Members
			m[0], m[1] = m[1], m[0]
		}, "sorted"},
		{"group duplicate member", func(gs *types.GenesisState) {
			gs.EpochGroup.Members = append(gs.EpochGroup.Members, gs.EpochGroup.Members[1])
		}, "unique"},
		{"group member bad address", func(gs *types.GenesisState) { gs.EpochGroup.Members[1].Address = "x" }, "address"},
		{"group member not a participant", func(gs *types.GenesisState) {
			gs.EpochGroup.Members = append(gs.EpochGroup.Members, member(3, "a"))
		}, "not a participant"},
		{"group member unsorted models", func(gs *types.GenesisState) {
			gs.EpochGroup.Members[0].Models = []string{"b", "a"}
		}, "sorted"},
		{"group member bad model", func(gs *types.GenesisState) { gs.EpochGroup.Members[0].Models = []string{"a b"} }, "model"},
		{"group member weight over max", func(gs *types.GenesisState) {
			gs.EpochGroup.Members[0].Weight = types.MaxParticipantWeight + 1
		}, "weight"},
		{"duplicate inference id", func(gs *types.GenesisState) {
			gs.Inferences = append(gs.Inferences, gs.Inferences[0])
		}, "twice"},
		{"inference bad id", func(gs *types.GenesisState) { gs.Inferences[0].InferenceId = "a b" }, "inference_id"},
		{"inference bad model", func(gs *types.GenesisState) { gs.Inferences[0].Model = "" }, "model"},
		{"inference bad executor address", func(gs *types.GenesisState) { gs.Inferences[0].Executor = "infer1x" }, "address"},
		{"inference bad transfer agent", func(gs *types.GenesisState) { gs.Inferences[0].TransferAgent = "" }, "address"},
		{"inference status unspecified", func(gs *types.GenesisState) { gs.Inferences[0].Status = 0 }, "status"},
		{"inference status unknown", func(gs *types.GenesisState) { gs.Inferences[0].Status = 7 }, "status"},
		{"bundle_v3_height negative", func(gs *types.GenesisState) { gs.BundleV3Height = -1 }, "bundle_v3_height"},
		{"bundle_v3_height past the largest height", func(gs *types.GenesisState) { gs.BundleV3Height = types.MaxHealthHeight + 1 }, "bundle_v3_height"},
		{"inference expires at start", func(gs *types.GenesisState) {
			gs.Inferences[0].ExpirationHeight = gs.Inferences[0].StartHeight
		}, "expiration_height"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			gs := validGenesis()
			tc.edit(&gs)
			err := gs.Validate(ac)
			require.Error(t, err)
			require.Contains(t, err.Error(), tc.mention)
		})
	}
}
