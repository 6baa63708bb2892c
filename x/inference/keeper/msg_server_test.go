package keeper_test

import (
	"strings"
	"testing"

	"cosmossdk.io/math"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	addresscodec "github.com/cosmos/cosmos-sdk/codec/address"
	sdkerrors "github.com/cosmos/cosmos-sdk/types/errors"

	"github.com/inferenced/inferenced/x/inference/types"
)

func TestRegisterParticipantStoresSortedActiveRecordAndEmitsEvent(t *testing.T) {
	f := newFixture(t)
	f.begin(7)
	require.NoError(t, f.register(1, 42, true, "qwen", "llama"))

	p := f.participant(1)
	require.Equal(t, types.Participant{
		Address: bech(1), InferenceUrl: nodeURL(1), Models: []string{"llama", "qwen"}, Weight: 42,
		PocAvailable: true, Status: types.PARTICIPANT_STATUS_ACTIVE, RegisteredHeight: 7, Bond: bondFor(42),
	}, p)
	evs := typedEvents[*types.EventParticipantRegistered](t, f.ctx)
	require.Len(t, evs, 1)
	require.Equal(t, bech(1), evs[0].Address)
	require.False(t, evs[0].Updated)
}

func TestRegisterParticipantRejectsDuplicateAndKeepsOriginal(t *testing.T) {
	f := newFixture(t)
	f.begin(1)
	require.NoError(t, f.register(1, 10, false, "m"))
	err := f.register(1, 99, true, "other")
	require.ErrorIs(t, err, types.ErrParticipantExists)
	p := f.participant(1)
	require.Equal(t, uint64(10), p.Weight)
	require.Equal(t, []string{"m"}, p.Models)
}

func TestRegisterParticipantRejectsAbusiveInput(t *testing.T) {
	cosmosAddr, err := addresscodec.NewBech32Codec("cosmos").BytesToString(addr(1))
	require.NoError(t, err)
	tooMany := make([]string, types.MaxModels+1)
	for i := range tooMany {
		tooMany[i] = "model-" + string(rune('a'+i))
	}
	cases := []struct {
		name    string
		creator string
		url     string
		models  []string
		weight  uint64
		wantErr error
	}{
		{"url scheme ftp", bech(1), "ftp://node.example/", []string{"m"}, 1, types.ErrInvalidParticipant},
		{"url scheme javascript", bech(1), "javascript:alert(1)", []string{"m"}, 1, types.ErrInvalidParticipant},
		{"url relative", bech(1), "/v1/chat", []string{"m"}, 1, types.ErrInvalidParticipant},
		{"url empty", bech(1), "", []string{"m"}, 1, types.ErrInvalidParticipant},
		{"url credentials", bech(1), "http://user:secret@node.example/", []string{"m"}, 1, types.ErrInvalidParticipant},
		{"url query", bech(1), "https://node.example/v1?token=x", []string{"m"}, 1, types.ErrInvalidParticipant},
		{"url fragment", bech(1), "https://node.example/v1#frag", []string{"m"}, 1, types.ErrInvalidParticipant},
		{"url too long", bech(1), "https://node.example/" + strings.Repeat("a", types.MaxURLLength), []string{"m"}, 1, types.ErrInvalidParticipant},
		{"no models", bech(1), nodeURL(1), nil, 1, types.ErrInvalidParticipant},
		{"duplicate model", bech(1), nodeURL(1), []string{"m", "x", "m"}, 1, types.ErrInvalidParticipant},
		{"too many models", bech(1), nodeURL(1), tooMany, 1, types.ErrInvalidParticipant},
		{"model with space", bech(1), nodeURL(1), []string{"llama 3"}, 1, types.ErrInvalidParticipant},
		{"model with non-ascii", bech(1), nodeURL(1), []string{"модель"}, 1, types.ErrInvalidParticipant},
		{"model empty", bech(1), nodeURL(1), []string{""}, 1, types.ErrInvalidParticipant},
		{"model too long", bech(1), nodeURL(1), []string{strings.Repeat("m", types.MaxModelLength+1)}, 1, types.ErrInvalidParticipant},
		{"weight over max", bech(1), nodeURL(1), []string{"m"}, types.MaxParticipantWeight + 1, types.ErrInvalidParticipant},
		{"creator empty", "", nodeURL(1), []string{"m"}, 1, sdkerrors.ErrInvalidAddress},
		{"creator wrong prefix", cosmosAddr, nodeURL(1), []string{"m"}, 1, sdkerrors.ErrInvalidAddress},
		{"creator bad checksum", bech(1)[:len(bech(1))-1] + "x", nodeURL(1), []string{"m"}, 1, sdkerrors.ErrInvalidAddress},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			f.begin(1)
			_, err := f.msg.RegisterParticipant(f.ctx, &types.MsgRegisterParticipant{
				Creator: tc.creator, InferenceUrl: tc.url, Models: tc.models, Weight: tc.weight,
			})
			require.ErrorIs(t, err, tc.wantErr)
			has, err := f.k.Participants.Has(f.ctx, addr(1))
			require.NoError(t, err)
			require.False(t, has, "nothing may be stored on a rejected registration")
			require.Empty(t, typedEvents[*types.EventParticipantRegistered](t, f.ctx))
		})
	}
}

func TestRegisterParticipantAcceptsBoundaryValues(t *testing.T) {
	models := make([]string, types.MaxModels)
	for i := range models {
		models[i] = "org/model:" + string(rune('a'+i)) + "_v1.0-x"
	}
	f := newFixture(t)
	f.begin(1)
	bond := bondFor(types.MaxParticipantWeight)
	f.bank.Fund(addr(1), bond)
	_, err := f.msg.RegisterParticipant(f.ctx, &types.MsgRegisterParticipant{
		Creator: bech(1), InferenceUrl: "https://node.example:443/" + strings.Repeat("a", types.MaxURLLength-len("https://node.example:443/")),
		Models: models, Weight: types.MaxParticipantWeight, Bond: bond,
	})
	require.NoError(t, err)
	require.NoError(t, f.register(2, 1, false, strings.Repeat("m", types.MaxModelLength)))
}

func TestUpdateParticipantChangesFieldsButNotStatusOrStats(t *testing.T) {
	f := newFixture(t, withParticipants(gp(1, 77, false, "m")))
	f.begin(1)
	p := f.participant(1)
	p.Weight = 10
	p.Status = types.PARTICIPANT_STATUS_INACTIVE
	p.CurrentEpochStats = types.CurrentEpochStats{InferenceCount: 3, MissedRequests: 9}
	require.NoError(t, f.k.Participants.Set(f.ctx, addr(1), p))

	_, err := f.msg.UpdateParticipant(f.ctx, &types.MsgUpdateParticipant{
		Creator: bech(1), InferenceUrl: "https://new.example/", Models: []string{"z", "a"}, Weight: 77, PocAvailable: true,
	})
	require.NoError(t, err)
	got := f.participant(1)
	require.Equal(t, "https://new.example/", got.InferenceUrl)
	require.Equal(t, []string{"a", "z"}, got.Models)
	require.Equal(t, uint64(77), got.Weight)
	require.True(t, got.PocAvailable)
	require.Equal(t, types.PARTICIPANT_STATUS_INACTIVE, got.Status)
	require.Equal(t, p.CurrentEpochStats, got.CurrentEpochStats)
	evs := typedEvents[*types.EventParticipantRegistered](t, f.ctx)
	require.Len(t, evs, 1)
	require.True(t, evs[0].Updated)
}

func TestUpdateParticipantRejectsUnregisteredAndInvalid(t *testing.T) {
	f := newFixture(t, withParticipants(gp(1, 10, false, "m")))
	f.begin(1)
	_, err := f.msg.UpdateParticipant(f.ctx, &types.MsgUpdateParticipant{
		Creator: bech(2), InferenceUrl: nodeURL(2), Models: []string{"m"}, Weight: 1,
	})
	require.ErrorIs(t, err, types.ErrParticipantNotFound)
	has, err := f.k.Participants.Has(f.ctx, addr(2))
	require.NoError(t, err)
	require.False(t, has, "update must not register")

	_, err = f.msg.UpdateParticipant(f.ctx, &types.MsgUpdateParticipant{
		Creator: bech(1), InferenceUrl: "http://u:p@h/", Models: []string{"m"}, Weight: 1,
	})
	require.ErrorIs(t, err, types.ErrInvalidParticipant)
	_, err = f.msg.UpdateParticipant(f.ctx, &types.MsgUpdateParticipant{
		Creator: "not-an-address", InferenceUrl: nodeURL(1), Models: []string{"m"}, Weight: 1,
	})
	require.ErrorIs(t, err, sdkerrors.ErrInvalidAddress)
	require.Equal(t, gp(1, 10, false, "m"), f.participant(1))
}

func TestUpdateParticipantTakesEffectInGroupOnlyAtNextEpoch(t *testing.T) {
	f := newFixture(t, withParticipants(gp(1, 10, true, "old")))
	f.begin(1)
	f.advanceTo(10)
	f.bank.Fund(addr(1), bondFor(89))
	_, err := f.msg.UpdateParticipant(f.ctx, &types.MsgUpdateParticipant{
		Creator: bech(1), InferenceUrl: "https://moved.example/", Models: []string{"new"}, Weight: 99, PocAvailable: true,
		AddBond: bondFor(89),
	})
	require.NoError(t, err)

	// Same epoch: the group, selection and enforcement still see the snapshot.
	f.advanceTo(testEpochLength)
	g := f.group()
	require.Equal(t, uint64(1), g.EpochIndex)
	require.Equal(t, types.EpochMember{
		Address: bech(1), Weight: 10, Models: []string{"old"}, InferenceUrl: nodeURL(1), PocAvailable: true,
	}, g.Members[0])
	_, err = f.draw("new", 1)
	require.Equal(t, codes.FailedPrecondition, status.Code(err))
	_, err = f.start("inf-new-1", 1, "new")
	require.ErrorIs(t, err, types.ErrExecutorNotRoutable)
	f.mustStart("inf-old-1", 1, "old")

	// Boundary: the new registration is the snapshot.
	f.begin(1 + testEpochLength)
	g = f.group()
	require.Equal(t, uint64(2), g.EpochIndex)
	require.Equal(t, types.EpochMember{
		Address: bech(1), Weight: 99, Models: []string{"new"}, InferenceUrl: "https://moved.example/", PocAvailable: true,
	}, g.Members[0])
	f.mustStart("inf-new-2", 1, "new")
	_, err = f.start("inf-old-2", 1, "old")
	require.ErrorIs(t, err, types.ErrExecutorNotRoutable)
}

func TestUpdateParamsByAuthorityStoresAndEmits(t *testing.T) {
	f := newFixture(t)
	f.begin(1)
	p := testParams()
	p.EpochLength = 500
	p.DowntimeHThreshold = dec("5.5")
	_, err := f.msg.UpdateParams(f.ctx, &types.MsgUpdateParams{Authority: authority(t), Params: p})
	require.NoError(t, err)
	got, err := f.k.Params.Get(f.ctx)
	require.NoError(t, err)
	require.True(t, p.Equal(&got))
	require.Len(t, typedEvents[*types.EventParamsUpdated](t, f.ctx), 1)
}

func TestUpdateParamsRejectsWrongSigner(t *testing.T) {
	f := newFixture(t)
	f.begin(1)
	p := testParams()
	p.EpochLength = 500
	for _, signer := range []string{bech(1), "", strings.ToUpper(authority(t)), authority(t) + " "} {
		_, err := f.msg.UpdateParams(f.ctx, &types.MsgUpdateParams{Authority: signer, Params: p})
		require.ErrorIs(t, err, types.ErrInvalidSigner, "signer %q", signer)
	}
	got, err := f.k.Params.Get(f.ctx)
	require.NoError(t, err)
	require.True(t, got.Equal(testParams()))
}

func TestUpdateParamsRejectsEveryInvalidRuleAndStoresNothing(t *testing.T) {
	cases := []struct {
		name string
		edit func(*types.Params)
	}{
		{"epoch_length 0", func(p *types.Params) { p.EpochLength = 0 }},
		{"epoch_length 1", func(p *types.Params) { p.EpochLength = 1 }},
		{"epoch_length over max", func(p *types.Params) { p.EpochLength = types.MaxEpochLength + 1 }},
		{"poc_phase_blocks equals epoch_length", func(p *types.Params) { p.PocPhaseBlocks = p.EpochLength }},
		{"poc_phase_blocks over epoch_length", func(p *types.Params) { p.PocPhaseBlocks = p.EpochLength + 1 }},
		{"expiration_blocks 0", func(p *types.Params) { p.ExpirationBlocks = 0 }},
		{"expiration_blocks over epoch_length", func(p *types.Params) { p.ExpirationBlocks = p.EpochLength + 1 }},
		{"good percentage unset", func(p *types.Params) { p.DowntimeGoodPercentage = math.LegacyDec{} }},
		{"bad percentage unset", func(p *types.Params) { p.DowntimeBadPercentage = math.LegacyDec{} }},
		{"h threshold unset", func(p *types.Params) { p.DowntimeHThreshold = math.LegacyDec{} }},
		{"good percentage 0", func(p *types.Params) { p.DowntimeGoodPercentage = dec("0") }},
		{"good percentage negative", func(p *types.Params) { p.DowntimeGoodPercentage = dec("-0.1") }},
		{"bad equals good", func(p *types.Params) { p.DowntimeBadPercentage = dec("0.1") }},
		{"bad below good", func(p *types.Params) { p.DowntimeBadPercentage = dec("0.05") }},
		{"bad percentage 1", func(p *types.Params) { p.DowntimeBadPercentage = dec("1") }},
		{"bad percentage over 1", func(p *types.Params) { p.DowntimeBadPercentage = dec("1.5") }},
		{"h threshold 0", func(p *types.Params) { p.DowntimeHThreshold = dec("0") }},
		{"h threshold negative", func(p *types.Params) { p.DowntimeHThreshold = dec("-4") }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			f.begin(1)
			p := testParams()
			tc.edit(&p)
			_, err := f.msg.UpdateParams(f.ctx, &types.MsgUpdateParams{Authority: authority(t), Params: p})
			require.ErrorIs(t, err, types.ErrInvalidParams)
			got, err := f.k.Params.Get(f.ctx)
			require.NoError(t, err)
			require.True(t, got.Equal(testParams()), "params changed to %v", got)
			require.Empty(t, typedEvents[*types.EventParamsUpdated](t, f.ctx))
		})
	}
}

// Registration is bounded (max_participants), so a flood of registrations
// cannot make every epoch boundary arbitrarily slow; and a weight-0
// registration, which could never be drawn, is refused.
func TestRegisterParticipantRefusesFullRegistryAndZeroWeight(t *testing.T) {
	p := testParams()
	p.MaxParticipants = 3
	f := newFixture(t, withParams(p), withParticipants(gp(1, 10, true, "m")))
	f.begin(1)
	err := f.register(2, 0, false, "m")
	require.ErrorIs(t, err, types.ErrInvalidParticipant)
	require.ErrorContains(t, err, "weight must be >= 1")
	require.NoError(t, f.register(2, 1, false, "m"))
	require.NoError(t, f.register(3, 1, false, "m"))
	err = f.register(4, 1, false, "m")
	require.ErrorIs(t, err, types.ErrParticipantRegistryFull)
	require.ErrorContains(t, err, "registry is full")
	count, err := f.k.ParticipantCount.Get(f.ctx)
	require.NoError(t, err)
	require.Equal(t, uint64(3), count)
}
