package keeper_test

import (
	"testing"

	sdk "github.com/cosmos/cosmos-sdk/types"
	"github.com/stretchr/testify/require"

	"github.com/inferenced/inferenced/x/inference/types"
)

// The last version-1 block and the upgrade block of these tests.
const (
	lastV1Height  = 20
	upgradeHeight = lastV1Height + 1
)

// v1Outcome is one outcome the last version-1 block queued.
type v1Outcome struct {
	agent, executor byte
	id              string
	miss            bool
}

// leaveV1Outcomes stores what the last version-1 block leaves of each
// outcome: the closed inference keyed by id alone, and its sample queued
// without agent or end height. Version 1 counted each in the executor's
// stats when it closed; the test sets those stats itself.
func leaveV1Outcomes(t *testing.T, f *fixture, outcomes []v1Outcome) {
	t.Helper()
	m := newMigrator(*f.k)
	for _, o := range outcomes {
		inf := types.Inference{
			InferenceId: o.id, Model: "m", TransferAgent: bech(o.agent), Executor: bech(o.executor),
			Status: types.INFERENCE_STATUS_FINISHED, EpochIndex: 1, StartHeight: 15,
			ExpirationHeight: lastV1Height, EndHeight: lastV1Height,
		}
		if o.miss {
			inf.Status = types.INFERENCE_STATUS_EXPIRED
		}
		require.NoError(t, m.SetV3Inference(f.ctx, inf))
		queued := inf
		queued.TransferAgent, queued.EndHeight = "", 0 // as version 1 queued it
		require.NoError(t, f.k.Breaker().QueueOutcome(f.ctx, queued, o.miss))
	}
}

// upgradeAt runs block h's pre-blocker as the v2 upgrade does (the upgrade
// module's migration first, then the breaker's step with the attested
// samples queued by attest), then BeginBlock.
func (f *fixture) upgradeAt(h int64, migrate func(sdk.Context) error) {
	f.t.Helper()
	f.height = h
	f.ctx = f.ctx.WithBlockHeight(h).WithEventManager(sdk.NewEventManager())
	require.NoError(f.t, migrate(f.ctx))
	f.applyHealth()
	require.NoError(f.t, f.k.BeginBlock(f.ctx))
}

// Version 1 counted a miss in MissedRequests and ran the SPRT the moment
// it expired; this binary counts one when the evidence ledger corroborates
// it, which for the misses the last version-1 block queued is the upgrade
// block's step or later. Migrate1to2 takes version 1's count back, so each
// counts once, exactly when this binary's rule counts it, and the SPRT
// never weighs it twice. Gonka's SPRT defaults: 5 misses and no success
// are not down, 6 are.
func TestMigrate1to2CountsEachQueuedMissOnce(t *testing.T) {
	a, b := byte(agentByte), byte(secondAgentByte)
	pair := []v1Outcome{{a, 1, "m-a", true}, {b, 1, "m-b", true}} // in flight together: they corroborate each other
	cases := []struct {
		name     string
		outcomes []v1Outcome
		attested bool // an attested miss of executor 1 in the upgrade block
		// v1 is executor 1's stats and status as the last version-1 block
		// left them (its queued misses included); want after the upgrade
		// block's step.
		v1Missed, v1Finished uint64
		v1Inactive           bool
		wantMissed           uint64
	}{
		{name: "two agents' misses corroborate each other: counted once each",
			outcomes: pair, v1Missed: 2, wantMissed: 2},
		{name: "a queued success is not taken back",
			outcomes: append([]v1Outcome{{a, 1, "ok-a", false}}, pair...), v1Missed: 2, v1Finished: 3, wantMissed: 2},
		// Counted twice, 5 would become 7 and the SPRT would find an
		// executor down that version 1 checked and found up.
		{name: "the SPRT does not weigh a miss twice",
			outcomes: pair, v1Missed: 5, wantMissed: 5},
		// Version 1 made it INACTIVE at 6; the verdict stands, and the
		// recount does not report it again.
		{name: "an executor version 1 made INACTIVE stays so",
			outcomes: pair, v1Missed: 6, v1Inactive: true, wantMissed: 6},
		{name: "one agent's miss nothing backs is held, not counted",
			outcomes: pair[:1], v1Missed: 3, wantMissed: 2},
		{name: "an attested miss in its lifetime counts it",
			outcomes: pair[:1], attested: true, v1Missed: 3, wantMissed: 3},
		{name: "never below zero",
			outcomes: pair, v1Missed: 1, wantMissed: 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, withParticipants(gp(1, 10, true, "m"), gp(2, 10, true, "m")))
			f.begin(1)
			f.advanceTo(lastV1Height)
			p := f.participant(1)
			p.CurrentEpochStats = types.CurrentEpochStats{MissedRequests: tc.v1Missed, InferenceCount: tc.v1Finished}
			if tc.v1Inactive {
				p.Status = types.PARTICIPANT_STATUS_INACTIVE
			}
			require.NoError(t, f.k.Participants.Set(f.ctx, addr(1), p))
			leaveV1Outcomes(t, f, tc.outcomes)
			if tc.attested {
				f.attest(1, true)
			}

			f.upgradeAt(upgradeHeight, newMigrator(*f.k).Migrate1to2)
			got := f.participant(1)
			require.Equal(t, tc.wantMissed, got.CurrentEpochStats.MissedRequests)
			require.Equal(t, tc.v1Finished, got.CurrentEpochStats.InferenceCount)
			require.Equal(t, tc.v1Inactive, got.Status == types.PARTICIPANT_STATUS_INACTIVE, "status %s", got.Status)
			require.Empty(t, typedEvents[*types.EventParticipantInactive](t, f.ctx), "no SPRT verdict at the upgrade")
			require.Empty(t, f.census().Pending, "the step applied every queued outcome")
		})
	}
}

// Version 1 started the attested history of a record a traffic miss
// created empty; this binary starts it as a full window of oks (a fresh
// record: no attested miss, or it would have had a record already). Such a
// carried-over record would trip on two attested misses in its first four
// samples, where this binary's record needs the rule's run of three.
// Migrate1to2 gives it the attested window this binary's would have; a
// record that changed state began its windows empty in both versions and
// is left as it is, and so are gates and cooldowns.
func TestMigrate1to2GivesCarriedRecordsTheirAttestedHistory(t *testing.T) {
	f := newBreakerFixture(t)
	f.feed(2, "m") // executor 2: this binary's record, made by one traffic miss
	f.end()
	f.advanceTo(lastV1Height)
	// Executor 1: the record version 1 leaves after the same miss.
	require.NoError(t, f.k.Breaker().Restore(f.ctx, types.ExecutorHealth{
		Address: bech(1), State: types.HEALTH_STATE_HEALTHY, Traffic: types.SampleWindow{Bits: 1, Count: 1},
	}))
	// Executor 7 (no longer a member): excluded at the last version-1 block.
	excluded := types.ExecutorHealth{
		Address: bech(7), State: types.HEALTH_STATE_EXCLUDED, Reason: types.HEALTH_REASON_CONSECUTIVE_MISSES,
		SinceHeight: lastV1Height, ExcludedAt: lastV1Height, CooldownBlocks: bMax, Exclusions: 1,
	}
	require.NoError(t, f.k.Breaker().Restore(f.ctx, excluded))
	before := f.census()
	require.Zero(t, recordOf(t, before, 1).Attested.Count, "sanity: version 1's shape")

	f.upgradeAt(upgradeHeight, func(ctx sdk.Context) error {
		if err := newMigrator(*f.k).Migrate1to2(ctx); err != nil {
			return err
		}
		after := f.census()
		//Xrequire.Equal(t, recordOf(t, after, 2).Attested, recordOf(t, after, 1).Attested, "the attested window this binary's record has")
		require.Equal(t, types.SampleWindow{Count: 64}, recordOf(t, after, 1).Attested)
		require.Equal(t, recordOf(t, before, 1).Traffic, recordOf(t, after, 1).Traffic)
		require.Equal(t, excluded, recordOf(t, after, 7), "a record that changed state is left")
		// census checks the gates and the cooldown index against the records.
		require.Equal(t, outOf(before), outOf(after), "gates and cooldowns")
		return nil
	})
	f.end()

	// Two attested misses in four samples: both stay HEALTHY.
	for _, c := range "momo" {
		f.attest(1, c == 'm')
		f.attest(2, c == 'm')
		f.next()
	}
	for _, i := range []byte{1, 2} {
		require.Equal(t, types.HEALTH_STATE_HEALTHY, f.health(i).State, "executor %d", i)
	}
	require.Equal(t, f.health(2).AttestedSamples, f.health(1).AttestedSamples)
	// Three in a row still trip it.
	for range 3 {
		f.attest(1, true)
		f.next()
	}
	require.Equal(t, types.HEALTH_STATE_EXCLUDED, f.health(1).State)
}

// outOf is the EXCLUDED and PROBE records of c: what the gates and the
// cooldown index follow.
func outOf(c census) []types.ExecutorHealth {
	var out []types.ExecutorHealth
	for _, h := range c.Records {
		if h.State != types.HEALTH_STATE_HEALTHY {
			out = append(out, h)
		}
	}
	return out
}

// recordOf is executor i's breaker record in c.
func recordOf(t *testing.T, c census, i byte) types.ExecutorHealth {
	t.Helper()
	h, ok := c.Record(bech(i))
	require.True(t, ok, "executor %d has a record", i)
	return h
}
