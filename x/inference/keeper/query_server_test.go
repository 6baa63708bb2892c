package keeper_test

import (
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/cosmos/cosmos-sdk/types/query"

	"github.com/inferenced/inferenced/x/inference/types"
)

func TestQueryParams(t *testing.T) {
	f := newFixture(t)
	resp, err := f.query.Params(f.ctx, &types.QueryParamsRequest{})
	require.NoError(t, err)
	require.True(t, resp.Params.Equal(testParams()))
}

func TestQueryParticipant(t *testing.T) {
	f := newFixture(t, withParticipants(gp(1, 3, true, "m")))
	resp, err := f.query.Participant(f.ctx, &types.QueryParticipantRequest{Address: bech(1)})
	require.NoError(t, err)
	require.Equal(t, gp(1, 3, true, "m"), resp.Participant)

	_, err = f.query.Participant(f.ctx, &types.QueryParticipantRequest{Address: bech(2)})
	require.Equal(t, codes.NotFound, status.Code(err), "unregistered: %v", err)
	for _, bad := range []string{"", "infer1xyz", "cosmos1qqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqnrql8a"} {
		_, err = f.query.Participant(f.ctx, &types.QueryParticipantRequest{Address: bad})
		require.Equal(t, codes.InvalidArgument, status.Code(err), "address %q", bad)
	}
	_, err = f.query.Participant(f.ctx, nil)
	require.Equal(t, codes.InvalidArgument, status.Code(err))
}

func TestQueryParticipantsPaginatesInAddressOrder(t *testing.T) {
	var ps []types.Participant
	for _, b := range scrambled {
		ps = append(ps, gp(b, 1, false, "m"))
	}
	f := newFixture(t, withParticipants(ps...))
	want := []string{bech(0x01), bech(0x40), bech(0x80), bech(0xC0), bech(0xFF)}

	var got []string
	var key []byte
	for page := 0; ; page++ {
		resp, err := f.query.Participants(f.ctx, &types.QueryParticipantsRequest{
			Pagination: &query.PageRequest{Key: key, Limit: 2, CountTotal: page == 0},
		})
		require.NoError(t, err)
		if page == 0 {
			require.Equal(t, uint64(5), resp.Pagination.Total)
		}
		if page < 2 {
			require.Len(t, resp.Participants, 2, "page %d", page)
			require.NotEmpty(t, resp.Pagination.NextKey, "page %d", page)
		}
		for _, p := range resp.Participants {
			got = append(got, p.Address)
		}
		key = resp.Pagination.NextKey
		if len(key) == 0 {
			require.Equal(t, 2, page, "five participants in pages of two")
			require.Len(t, resp.Participants, 1)
			break
		}
	}
	require.Equal(t, want, got)

	resp, err := f.query.Participants(f.ctx, &types.QueryParticipantsRequest{Pagination: &query.PageRequest{Offset: 3, Limit: 2}})
	require.NoError(t, err)
	require.Len(t, resp.Participants, 2)
	require.Equal(t, want[3], resp.Participants[0].Address)

	all, err := f.query.Participants(f.ctx, nil)
	require.NoError(t, err)
	require.Len(t, all.Participants, 5)

	_, err = f.query.Participants(f.ctx, &types.QueryParticipantsRequest{Pagination: &query.PageRequest{Key: []byte{1}, Offset: 1}})
	require.Equal(t, codes.InvalidArgument, status.Code(err), "key and offset together")
}

func TestQueryCurrentEpoch(t *testing.T) {
	f := newFixture(t)
	_, err := f.query.CurrentEpoch(f.ctx, &types.QueryCurrentEpochRequest{})
	require.Equal(t, codes.NotFound, status.Code(err), "before the first block")

	f.begin(1)
	cases := []struct {
		height int64
		inPoc  bool
		index  uint64
		next   int64
	}{
		{1, true, 1, 1 + testEpochLength},
		{testPocBlocks, true, 1, 1 + testEpochLength},
		{1 + testPocBlocks, false, 1, 1 + testEpochLength},
		{testEpochLength, false, 1, 1 + testEpochLength},
		{1 + testEpochLength, true, 2, 1 + 2*testEpochLength},
		{1 + testEpochLength + testPocBlocks, false, 2, 1 + 2*testEpochLength},
	}
	for _, tc := range cases {
		f.advanceTo(tc.height)
		resp, err := f.query.CurrentEpoch(f.ctx, &types.QueryCurrentEpochRequest{})
		require.NoError(t, err)
		require.Equal(t, tc.index, resp.Epoch.Index, "height %d", tc.height)
		require.Equal(t, tc.inPoc, resp.InPocPhase, "height %d", tc.height)
		require.Equal(t, tc.next, resp.NextEpochHeight, "height %d", tc.height)
	}
}

func TestQueryEpochGroup(t *testing.T) {
	f := newFixture(t, withParticipants(gp(2, 20, false, "b"), gp(1, 10, true, "a", "b")))
	_, err := f.query.EpochGroup(f.ctx, &types.QueryEpochGroupRequest{})
	require.Equal(t, codes.NotFound, status.Code(err))

	f.begin(1)
	resp, err := f.query.EpochGroup(f.ctx, &types.QueryEpochGroupRequest{})
	require.NoError(t, err)
	require.Equal(t, types.EpochGroup{EpochIndex: 1, Members: []types.EpochMember{
		{Address: bech(1), Weight: 10, Models: []string{"a", "b"}, InferenceUrl: nodeURL(1), PocAvailable: true},
		{Address: bech(2), Weight: 20, Models: []string{"b"}, InferenceUrl: nodeURL(2)},
	}}, resp.Group)
}

func TestQueryInference(t *testing.T) {
	f := newFixture(t, withParticipants(gp(1, 1, true, "m")))
	f.begin(1)
	f.mustStart("q-1", 1, "m")
	agent := bech(agentByte)
	resp, err := f.query.Inference(f.ctx, &types.QueryInferenceRequest{InferenceId: "q-1", TransferAgent: agent})
	require.NoError(t, err)
	require.Equal(t, f.inference("q-1"), resp.Inference)

	_, err = f.query.Inference(f.ctx, &types.QueryInferenceRequest{InferenceId: "q-2", TransferAgent: agent})
	require.Equal(t, codes.NotFound, status.Code(err))
	require.ErrorContains(t, err, "never started (no inference has been pruned yet)")
	// Wrong agent: the id is agentByte's, not secondAgentByte's.
	_, err = f.query.Inference(f.ctx, &types.QueryInferenceRequest{InferenceId: "q-1", TransferAgent: bech(secondAgentByte)})
	require.Equal(t, codes.NotFound, status.Code(err))
	for _, bad := range []string{"", "a b", "../etc"} {
		_, err = f.query.Inference(f.ctx, &types.QueryInferenceRequest{InferenceId: bad, TransferAgent: agent})
		require.Equal(t, codes.InvalidArgument, status.Code(err), "id %q", bad)
	}
	for _, bad := range []string{"", "infer1bad", "cosmos1qyqszqgpqyqszqgpqyqszqgpqyqszqgp8apuk5"} {
		_, err = f.query.Inference(f.ctx, &types.QueryInferenceRequest{InferenceId: "q-1", TransferAgent: bad})
		require.Equal(t, codes.InvalidArgument, status.Code(err), "agent %q", bad)
		require.ErrorContains(t, err, "transfer_agent")
	}
	_, err = f.query.Inference(f.ctx, nil)
	require.Equal(t, codes.InvalidArgument, status.Code(err))
}
