package keeper_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/inferenced/inferenced/x/inference/types"
)

func TestExclusionCapKeepsMostOfAModelServing(t *testing.T) {
	p := breakerParams()
	p.HealthCbInitialCooldownBlocks, p.HealthCbMaxCooldownBlocks = 100, 100
	f := newBreakerFixture(t, withParams(p)) // 4 x weight 10, cap 50%
	f.feed(1, "mmm")
	f.feed(2, "mmm")
	f.feed(3, "mmm")
	h := f.health(3)
	require.Equal(t, types.HEALTH_STATE_HEALTHY, h.State, "a third exclusion would take 30 of 40")
	require.Equal(t, uint32(1), h.CapRefusals)
	require.Equal(t, types.HEALTH_REASON_NONE, h.Reason)
	capped := typedEvents[*types.EventExclusionCapped](t, f.ctx)
	require.Len(t, capped, 1)
	require.Equal(t, types.EventExclusionCapped{
		Executor: bech(3), Model: "m", ExcludedWeight: 20, ExecutorWeight: 10, ModelWeight: 40, CapPct: 50, Height: f.height,
	}, *capped[0])
	require.Empty(t, typedEvents[*types.EventExecutorHealthChanged](t, f.ctx))
	got := f.offered(400)
	require.Zero(t, got[bech(1)])
	require.Zero(t, got[bech(2)])
	require.Positive(t, got[bech(3)])
}

func TestExclusionCapFreedByARestoredExecutor(t *testing.T) {
	f := newBreakerFixture(t)
	f.feed(1, "mmm")
	f.feed(2, "mmm")
	f.runUntil(bInitial+1, func() bool { return f.health(1).State == types.HEALTH_STATE_PROBE })
	f.feed(3, "mmm")
	require.Equal(t, types.HEALTH_STATE_HEALTHY, f.health(3).State, "a PROBE executor still counts against the cap")
	require.Equal(t, uint32(1), f.health(3).CapRefusals)
	f.feed(1, "o") // probe of 1 succeeds: capacity for one more
	require.Equal(t, types.HEALTH_STATE_HEALTHY, f.health(1).State)
	f.feed(3, "m")
	require.Equal(t, types.HEALTH_STATE_EXCLUDED, f.health(3).State)
}

// Exclusions decided in the same block count against the cap one after the
// other, in address order.
func TestExclusionCapAppliesWithinOneBlock(t *testing.T) {
	f := newBreakerFixture(t) // 4 x weight 10, cap 50%
	for range 3 {
		for i := byte(1); i <= 3; i++ {
			f.attest(i, true)
		}
		f.next()
	}
	require.Equal(t, types.HEALTH_STATE_EXCLUDED, f.health(1).State)
	require.Equal(t, types.HEALTH_STATE_EXCLUDED, f.health(2).State)
	require.Equal(t, types.HEALTH_STATE_HEALTHY, f.health(3).State)
	require.Len(t, typedEvents[*types.EventExclusionCapped](t, f.ctx), 1)
}

// A miss of a request sent before the exclusion, landing after the probe
// restored the executor, is not held against it.
func TestMissesOfRequestsSentBeforeExclusionDoNotReExcludeARestoredExecutor(t *testing.T) {
	p := breakerParams()
	p.ExpirationBlocks = 12
	f := newBreakerFixture(t, withParams(p))
	for range 3 {
		f.mustStart(f.newID(), 1, "m")
	}
	for range 3 {
		f.attest(1, true)
		f.next()
	}
	require.Equal(t, types.HEALTH_STATE_EXCLUDED, f.health(1).State)
	f.runUntil(bInitial+1, func() bool { return f.health(1).State == types.HEALTH_STATE_PROBE })
	f.feed(1, "o")
	require.Equal(t, types.HEALTH_STATE_HEALTHY, f.health(1).State)
	f.runUntil(int(p.ExpirationBlocks), func() bool { return f.participant(1).CurrentEpochStats.MissedRequests == 3 })
	f.next()
	h := f.health(1)
	require.Equal(t, types.HEALTH_STATE_HEALTHY, h.State)
	require.Zero(t, h.TrafficSamples, "stale misses are not samples")
}

// An executor's samples of one block are applied to its record as a batch:
// a success that pushes its last miss out of the history does not drop the
// record halfway, which would start a miss later in the batch from nothing.
func TestSamplesOfOneBlockKeepTheExecutorsHistory(t *testing.T) {
	f := newBreakerFixture(t)
	f.feed(1, "m")
	for range 63 {
		id := f.newID()
		f.mustStart(id, 1, "m")
		require.NoError(t, f.finish(1, id))
	}
	f.next()
	f.mustStart("expires-next-block", 1, "m")
	f.next()
	f.mustStart("ok", 1, "m")
	require.NoError(t, f.finish(1, "ok"))
	f.next() // the block's end expires the other
	f.next()
	h := f.health(1)
	require.Equal(t, uint32(16), h.TrafficSamples)
	require.Equal(t, uint32(1), h.TrafficMisses)
}

func TestShadowModeRunsBreakerButSelectionIgnoresIt(t *testing.T) {
	p := breakerParams()
	p.HealthCbEnforce = false
	f := newBreakerFixture(t, withParams(p))
	f.feed(1, "mmm")
	require.Equal(t, types.HEALTH_STATE_EXCLUDED, f.health(1).State)
	require.Len(t, typedEvents[*types.EventExecutorHealthChanged](t, f.ctx), 1)
	require.Positive(t, f.offered(400)[bech(1)], "shadow mode: selection ignores the breaker")
	f.next()
	f.next()
	f.mustStart("still-routed", 1, "m")
	require.NoError(t, f.finish(1, "still-routed"))
	f.runUntil(bInitial+1, func() bool { return f.health(1).State == types.HEALTH_STATE_PROBE })
	f.mustStart("probe", 1, "m")
	f.mustStart("not-refused", 1, "m")
	require.Equal(t, "probe", f.health(1).ProbeInferenceId, "the breaker still tracks its probe")
}

func TestTrafficExcludedExecutorNeedsARealProbeSuccess(t *testing.T) {
	f := newBreakerFixture(t)
	f.feed(1, "mmm")
	require.Equal(t, types.SAMPLE_KIND_TRAFFIC, f.health(1).Evidence)
	f.runUntil(bInitial+1, func() bool { return f.health(1).State == types.HEALTH_STATE_PROBE })
	for range 3 {
		f.attest(1, false)
		f.next()
	}
	require.Equal(t, types.HEALTH_STATE_PROBE, f.health(1).State, "a passing health check does not restore it")
	f.feed(1, "o")
	require.Equal(t, types.HEALTH_STATE_HEALTHY, f.health(1).State)
}

func TestAttestedExclusionRestoredByAttestedOKAndReExcludedByAttestedMiss(t *testing.T) {
	f := newBreakerFixture(t)
	for range 3 {
		f.attest(2, true)
		f.next()
	}
	h := f.health(2)
	require.Equal(t, types.HEALTH_STATE_EXCLUDED, h.State)
	require.Equal(t, types.SAMPLE_KIND_ATTESTED, h.Evidence)
	f.runUntil(bInitial+1, func() bool { return f.health(2).State == types.HEALTH_STATE_PROBE })
	f.attest(2, true)
	f.next()
	h = f.health(2)
	require.Equal(t, types.HEALTH_STATE_EXCLUDED, h.State, "any miss in PROBE re-excludes")
	require.Equal(t, uint64(2*bInitial), h.CooldownBlocks)
	f.runUntil(2*bInitial+1, func() bool { return f.health(2).State == types.HEALTH_STATE_PROBE })
	f.attest(2, false)
	f.next()
	h = f.health(2)
	require.Equal(t, types.HEALTH_STATE_HEALTHY, h.State)
	require.Equal(t, types.HEALTH_REASON_ATTESTED_OK, h.Reason)
}

func TestHealthyTrafficWritesNoBreakerState(t *testing.T) {
	f := newBreakerFixture(t)
	for range 5 {
		for i := byte(1); i <= 4; i++ {
			id := f.newID()
			f.mustStart(id, i, "m")
			require.NoError(t, f.finish(i, id))
		}
		f.next()
	}
	c := f.census()
	require.Empty(t, c.Records)
	require.Empty(t, c.Pending)
	require.Zero(t, c.Sequence, "no sample was queued")
}

func TestRecordOfAnExecutorWithoutRecentMissesIsDropped(t *testing.T) {
	f := newBreakerFixture(t)
	f.feed(1, "m")
	_, has := f.census().Record(bech(1))
	require.True(t, has)
	for range 64 {
		id := f.newID()
		f.mustStart(id, 1, "m")
		require.NoError(t, f.finish(1, id))
	}
	f.next()
	_, has = f.census().Record(bech(1))
	require.False(t, has, "the miss slid out of the history: nothing left to keep")
}

// A probe offered at weight 1 among a large total weight could wait for
// thousands of requests; it is offered at the healthy candidates' average
// weight (never above its own), so it is drawn about once per pool size.
func TestProbeIsOfferedAtTheAverageHealthyWeight(t *testing.T) {
	p := breakerParams()
	p.HealthCbMaxExcludedWeightPct = 100
	f := newBreakerFixture(t, withParams(p), withParticipants(gp(5, 1000, true, "m")))
	f.feed(5, "mmm")
	f.runUntil(bInitial+1, func() bool { return f.health(5).State == types.HEALTH_STATE_PROBE })
	resp := f.drawUntil(5)
	require.True(t, resp.Probe)
	require.Equal(t, uint64(4*10+10), resp.TotalWeight, "offered at 10, the average of the healthy")
	n := uint64(4000)
	requireNear(t, f.offered(n)[bech(5)], int(n), 10.0/50.0, "probe draws")
}

// A PROBE executor re-excluded in a block where the cap is already loaded
// is already counted as out: counting it again would refuse exclusions the
// cap allows.
func TestReExclusionInTheSameBlockIsNotCountedTwiceByTheCap(t *testing.T) {
	var ps []types.Participant
	for i := byte(5); i <= 10; i++ {
		ps = append(ps, gp(i, 10, true, "m"))
	}
	f := newBreakerFixture(t, withParticipants(ps...)) // 10 x weight 10, cap 50
	for range 3 {
		f.attest(2, true)
		f.next()
	}
	f.runUntil(bInitial+1, func() bool { return f.health(2).State == types.HEALTH_STATE_PROBE })
	for range 2 {
		for _, i := range []byte{1, 3, 4, 5} {
			f.attest(i, true)
		}
		f.next()
	}
	for _, i := range []byte{1, 2, 3, 4, 5} { // 1 trips first and loads the cap; 2 is re-excluded
		f.attest(i, true)
	}
	f.next()
	for _, i := range []byte{1, 2, 3, 4, 5} {
		require.Equal(t, types.HEALTH_STATE_EXCLUDED, f.health(i).State, "executor %d: 50 of 100 is within the cap", i)
	}
	require.Empty(t, typedEvents[*types.EventExclusionCapped](t, f.ctx))
}
