package keeper_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/inferenced/inferenced/x/inference/types"
)

// With gonka's defaults (0.1, 0.2, H=4) a miss adds ln 2 ~ 0.693 to the LLR
// and a success adds ln(8/9) ~ -0.118, so from a fresh epoch:
// 5 misses = 3.47 < 4, 6 misses = 4.16, 1 success + 6 misses = 4.04,
// 2 successes + 6 misses = 3.92, 2 successes + 7 misses = 4.62.
// These tests check the SPRT's arithmetic through the keeper, so one
// agent's word is trusted (min agents 1): each miss counts in the block
// after its expiry. TestAttackOneAgentCannotMakeAnExecutorInactive covers
// the default.
func trustingParams() types.Params {
	p := types.DefaultParams()
	p.HealthCbTrafficMinAgents = 1
	return p
}

func TestSPRTThroughKeeperMarksInactiveAtThreshold(t *testing.T) {
	cases := []struct {
		successes, misses int
		downAt            int // miss count at which the executor turns INACTIVE; 0 = never
	}{
		{0, 5, 0},
		{0, 6, 6},
		{0, 7, 6},
		{1, 6, 6},
		{2, 6, 0},
		{2, 7, 7},
	}
	for _, tc := range cases {
		t.Run(fmt.Sprintf("%d successes then %d misses", tc.successes, tc.misses), func(t *testing.T) {
			f := newFixture(t, withParams(trustingParams()), withParticipants(gp(1, 10, true, "m"), gp(2, 10, true, "m")))
			f.begin(1)
			for i := 0; i < tc.successes; i++ {
				id := fmt.Sprintf("ok-%d", i)
				f.mustStart(id, 1, "m")
				require.NoError(t, f.finish(1, id))
			}
			f.end()
			// One miss per block, so each expiry is observed on its own.
			first := f.height + 1
			for i := 0; i < tc.misses; i++ {
				f.begin(first + int64(i))
				f.mustStart(fmt.Sprintf("miss-%d", i), 1, "m")
				f.end()
			}
			inactiveEvents := 0
			f.block(first + int64(types.DefaultExpirationBlocks)) // the first miss expires
			for i := 1; i <= tc.misses; i++ {
				// Miss i expired at the end of this block's predecessor and
				// counts in this block's step.
				f.block(first + int64(i-1) + int64(types.DefaultExpirationBlocks) + 1)
				p := f.participant(1)
				require.Equal(t, uint64(i), p.CurrentEpochStats.MissedRequests)
				require.Equal(t, uint64(tc.successes), p.CurrentEpochStats.InferenceCount)
				wantInactive := tc.downAt != 0 && i >= tc.downAt
				require.Equal(t, wantInactive, p.Status == types.PARTICIPANT_STATUS_INACTIVE, "after miss %d: %s", i, p.Status)
				evs := typedEvents[*types.EventParticipantInactive](t, f.ctx)
				if i == tc.downAt {
					require.Len(t, evs, 1)
					require.Equal(t, types.EventParticipantInactive{
						Address: bech(1), InferenceCount: uint64(tc.successes), MissedRequests: uint64(i), EpochIndex: 1,
					}, *evs[0])
				}
				inactiveEvents += len(evs)
			}
			if tc.downAt == 0 {
				require.Zero(t, inactiveEvents)
			} else {
				require.Equal(t, 1, inactiveEvents, "the transition is reported once")
			}
			require.Equal(t, types.PARTICIPANT_STATUS_ACTIVE, f.participant(2).Status, "bystander untouched")
		})
	}
}

func TestSPRTInactiveLastsUntilEpochBoundary(t *testing.T) {
	params := trustingParams()
	params.EpochLength = 100
	params.HealthCbMaxCooldownBlocks = 99
	f := newFixture(t, withParams(params), withParticipants(gp(1, 10, true, "m"), gp(2, 10, true, "m")))
	f.begin(1)
	for i := 0; i < 6; i++ {
		f.mustStart(fmt.Sprintf("miss-%d", i), 1, "m")
	}
	f.end()
	f.advanceTo(2 + int64(params.ExpirationBlocks))
	require.Equal(t, types.PARTICIPANT_STATUS_INACTIVE, f.participant(1).Status)
	require.Len(t, typedEvents[*types.EventParticipantInactive](t, f.ctx), 1)

	// Out of routing for the rest of the epoch, whatever happens meanwhile.
	f.advanceTo(60)
	f.mustStart("ok-2", 2, "m")
	require.NoError(t, f.finish(2, "ok-2"))
	f.advanceTo(100)
	require.Equal(t, types.PARTICIPANT_STATUS_INACTIVE, f.participant(1).Status)
	_, err := f.start("refused", 1, "m")
	require.ErrorIs(t, err, types.ErrExecutorNotRoutable)
	for seed := uint64(0); seed < 100; seed++ {
		resp, err := f.draw("m", seed)
		require.NoError(t, err)
		require.Equal(t, bech(2), resp.Executor.Address)
		require.Equal(t, uint32(1), resp.Candidates)
	}

	f.begin(101)
	p := f.participant(1)
	require.Equal(t, types.PARTICIPANT_STATUS_ACTIVE, p.Status)
	require.Equal(t, types.CurrentEpochStats{}, p.CurrentEpochStats)
	require.Contains(t, memberAddrs(f.group()), bech(1))
	f.mustStart("back", 1, "m")
}
