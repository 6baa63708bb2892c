package keeper_test

import (
	"slices"
	"testing"

	storetypes "github.com/cosmos/cosmos-sdk/store/v2/types"
	"github.com/stretchr/testify/require"

	"github.com/inferenced/inferenced/x/inference/types"
)

// Byte order 0x01 < 0x40 < 0x80 < 0xC0 < 0xFF; their bech32 strings sort
// differently (c, g, l, q, s after "infer1"), so the test tells the two apart.
var scrambled = []byte{0x80, 0xFF, 0x01, 0xC0, 0x40}

func TestFirstBeginBlockOpensEpochOneWithActiveParticipantsSortedByAddressBytes(t *testing.T) {
	var ps []types.Participant
	for _, b := range scrambled {
		ps = append(ps, gp(b, uint64(b), false, "m"))
	}
	invalid := gp(0x20, 5, false, "m")
	invalid.Status = types.PARTICIPANT_STATUS_INVALID
	f := newFixture(t, withParticipants(append(ps, invalid)...))

	_, err := f.k.EpochGroup(f.ctx)
	require.ErrorIs(t, err, types.ErrNoEpoch)
	f.begin(3)

	epoch, err := f.k.Epoch.Get(f.ctx)
	require.NoError(t, err)
	require.Equal(t, types.Epoch{Index: 1, StartHeight: 3, Members: 5}, epoch)
	g := f.group()
	require.Equal(t, uint64(1), g.EpochIndex)
	want := []string{bech(0x01), bech(0x40), bech(0x80), bech(0xC0), bech(0xFF)}
	require.Equal(t, want, memberAddrs(g), "members in address-byte order, INVALID left out")
	require.False(t, slices.IsSorted(want), "test addresses must not already be in string order")
	for i, m := range g.Members {
		a, err := ac.StringToBytes(m.Address)
		require.NoError(t, err)
		idx, err := f.k.EpochMemberIndex.Get(f.ctx, a)
		require.NoError(t, err)
		require.Equal(t, uint32(i), idx, "member index of %s", m.Address)
		require.Equal(t, uint64(a[0]), m.Weight)
	}

	evs := typedEvents[*types.EventEpochStarted](t, f.ctx)
	require.Len(t, evs, 1)
	require.Equal(t, types.EventEpochStarted{
		EpochIndex: 1, StartHeight: 3, Members: 5, TotalWeight: 0x01 + 0x40 + 0x80 + 0xC0 + 0xFF,
	}, *evs[0])
	require.Equal(t, []types.Epoch{{Index: 1, StartHeight: 3, Members: 5}}, f.epochs)
}

func TestEpochBoundaryOpensNextEpochExactlyAtStartPlusLength(t *testing.T) {
	f := newFixture(t, withParticipants(gp(1, 1, false, "m")))
	f.begin(1)
	for h := int64(2); h < 1+testEpochLength; h++ {
		f.block(h)
		require.Empty(t, typedEvents[*types.EventEpochStarted](t, f.ctx), "height %d", h)
	}
	require.Equal(t, uint64(1), f.group().EpochIndex)

	f.begin(1 + testEpochLength)
	evs := typedEvents[*types.EventEpochStarted](t, f.ctx)
	require.Len(t, evs, 1)
	require.Equal(t, uint64(2), evs[0].EpochIndex)
	require.Equal(t, int64(1+testEpochLength), evs[0].StartHeight)

	f.advanceTo(1 + 2*testEpochLength)
	require.Equal(t, []types.Epoch{
		{Index: 1, StartHeight: 1, Members: 1},
		{Index: 2, StartHeight: 1 + testEpochLength, PreviousMembers: 1, Members: 1},
		{Index: 3, StartHeight: 1 + 2*testEpochLength, PreviousMembers: 1, Members: 1},
	}, f.epochs)
}

// The extensions of a block are made from the state before it: those of
// the block that opens an epoch attest about the previous epoch's group,
// whether asked before that block or after it.
func TestVoteGroupIsTheSameBeforeAndAfterTheBoundaryBlock(t *testing.T) {
	f := newFixture(t, withParticipants(gp(1, 1, false, "m"), gp(2, 1, false, "m")))
	f.begin(1)
	f.end()
	require.NoError(t, f.register(3, 1, false, "m")) // joins the group of epoch 2
	boundary := int64(1 + testEpochLength)
	f.advanceTo(boundary - 1)
	before, beforeN, err := f.k.VoteGroup(f.ctx, boundary)
	require.NoError(t, err)
	f.block(boundary)
	after, afterN, err := f.k.VoteGroup(f.ctx, boundary)
	require.NoError(t, err)
	require.Equal(t, uint64(1), before)
	require.Equal(t, before, after)
	require.Equal(t, 2, beforeN)
	require.Equal(t, beforeN, afterN)
	next, nextN, err := f.k.VoteGroup(f.ctx, boundary+1)
	require.NoError(t, err)
	require.Equal(t, uint64(2), next)
	require.Equal(t, 3, nextN)
}

func TestEpochBoundaryResetsStatsAndReactivatesInactiveButNotInvalid(t *testing.T) {
	f := newFixture(t, withParticipants(gp(1, 1, false, "m"), gp(2, 2, false, "m"), gp(3, 3, false, "m")))
	f.begin(1)
	for i, s := range map[byte]types.ParticipantStatus{
		1: types.PARTICIPANT_STATUS_INACTIVE, 2: types.PARTICIPANT_STATUS_ACTIVE, 3: types.PARTICIPANT_STATUS_INVALID,
	} {
		p := f.participant(i)
		p.Status = s
		p.CurrentEpochStats = types.CurrentEpochStats{InferenceCount: uint64(i), MissedRequests: 10 * uint64(i)}
		require.NoError(t, f.k.Participants.Set(f.ctx, addr(i), p))
	}
	f.advanceTo(1 + testEpochLength)

	for _, i := range []byte{1, 2, 3} {
		require.Equal(t, types.CurrentEpochStats{}, f.participant(i).CurrentEpochStats, "participant %d", i)
	}
	require.Equal(t, types.PARTICIPANT_STATUS_ACTIVE, f.participant(1).Status)
	require.Equal(t, types.PARTICIPANT_STATUS_ACTIVE, f.participant(2).Status)
	require.Equal(t, types.PARTICIPANT_STATUS_INVALID, f.participant(3).Status)
	require.Equal(t, []string{bech(1), bech(2)}, memberAddrs(f.group()))
}

func TestGenesisInactiveParticipantIsReactivatedByFirstEpoch(t *testing.T) {
	p := gp(1, 1, false, "m")
	p.Status = types.PARTICIPANT_STATUS_INACTIVE
	p.CurrentEpochStats.MissedRequests = 7
	f := newFixture(t, withParticipants(p))
	f.begin(1)
	require.Equal(t, types.PARTICIPANT_STATUS_ACTIVE, f.participant(1).Status)
	require.Equal(t, types.CurrentEpochStats{}, f.participant(1).CurrentEpochStats)
	require.Equal(t, []string{bech(1)}, memberAddrs(f.group()))
}

func TestParticipantRegisteredMidEpochJoinsOnlyAtNextBoundary(t *testing.T) {
	f := newFixture(t, withParticipants(gp(1, 1, true, "m")))
	f.begin(1)
	f.advanceTo(20)
	require.NoError(t, f.register(2, 5, true, "m"))

	f.advanceTo(testEpochLength)
	require.Equal(t, []string{bech(1)}, memberAddrs(f.group()))
	_, err := f.start("late-1", 2, "m")
	require.ErrorIs(t, err, types.ErrExecutorNotRoutable)
	for seed := uint64(0); seed < 50; seed++ {
		resp, err := f.draw("m", seed)
		require.NoError(t, err)
		require.Equal(t, bech(1), resp.Executor.Address)
	}

	f.begin(1 + testEpochLength)
	require.Equal(t, []string{bech(1), bech(2)}, memberAddrs(f.group()))
	f.mustStart("late-2", 2, "m")
}

func TestEpochWithNoParticipantsHasEmptyGroup(t *testing.T) {
	f := newFixture(t)
	f.begin(1)
	g := f.group()
	require.Equal(t, uint64(1), g.EpochIndex)
	require.Empty(t, g.Members)
	evs := typedEvents[*types.EventEpochStarted](t, f.ctx)
	require.Len(t, evs, 1)
	require.Zero(t, evs[0].Members)
}

func TestEpochLengthChangeAppliesToTheRunningEpoch(t *testing.T) {
	f := newFixture(t)
	f.begin(1)
	f.advanceTo(30)
	p := testParams()
	p.EpochLength = 20
	p.HealthCbMaxCooldownBlocks = 19
	_, err := f.msg.UpdateParams(f.ctx, &types.MsgUpdateParams{Authority: authority(t), Params: p})
	require.NoError(t, err)
	// start 1 + 20 = 21 is already behind: the next block opens epoch 2.
	f.begin(31)
	require.Equal(t, []types.Epoch{{Index: 1, StartHeight: 1}, {Index: 2, StartHeight: 31}}, f.epochs)
	f.advanceTo(51)
	require.Len(t, f.epochs, 3)
	require.Equal(t, types.Epoch{Index: 3, StartHeight: 51}, f.epochs[2])
}

// A quiet block (no boundary, nothing due) must not write to the store.
// The module store is listened to (the store's write stream, as a node's
// streaming services see it); a transaction first shows the listener
// hears writes.
func TestQuietBlockWritesNothing(t *testing.T) {
	f := newFixture(t, withParticipants(gp(1, 1, true, "m"), gp(2, 1, true, "m")))
	f.begin(1)
	f.end()
	f.cms.AddListeners([]storetypes.StoreKey{f.key})
	f.mustStart("a", 1, "m")
	require.NotEmpty(t, f.cms.PopStateCache(), "the listener must hear a transaction's writes")
	require.NoError(t, f.finish(1, "a"))
	f.cms.PopStateCache()

	f.advanceTo(testEpochLength)
	for _, w := range f.cms.PopStateCache() {
		t.Errorf("a quiet block wrote to the store: key %x (delete %v)", w.Key, w.Delete)
	}
}
