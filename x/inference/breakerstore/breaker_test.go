package breakerstore_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/inferenced/inferenced/x/inference/types"
)

// The seed's acceptance list, one test each.

func TestBreakerExcludesAboveThresholdWithMinSamples(t *testing.T) {
	f := newBreakerFixture(t, breakerParams())
	f.feed(1, "omo") // 1 miss of 3: healthy
	require.Equal(t, types.HEALTH_STATE_HEALTHY, f.health(1).State)
	f.feed(1, "m") // 2 of 4 = 50% > 25% with 4 samples
	h := f.health(1)
	require.Equal(t, types.HEALTH_STATE_EXCLUDED, h.State)
	require.Equal(t, types.HEALTH_REASON_MISS_RATE, h.Reason)
	require.Equal(t, f.height, h.ExcludedAt, "excluded in the block that applied the fourth sample")
	require.Equal(t, uint64(bInitial), h.CooldownBlocks)
	require.Equal(t, f.height+bInitial, h.EligibleHeight)
	require.Zero(t, f.offered(400)[bech(1)], "an EXCLUDED executor is never drawn")
	evs := typedEvents[*types.EventExecutorHealthChanged](t, f.ctx)
	require.Len(t, evs, 1)
	require.Equal(t, types.EventExecutorHealthChanged{
		Executor: bech(1), From: types.HEALTH_STATE_HEALTHY, To: types.HEALTH_STATE_EXCLUDED,
		Reason: types.HEALTH_REASON_MISS_RATE, Kind: types.SAMPLE_KIND_TRAFFIC, Samples: 4, Misses: 2,
		MissRatePct: 50, CooldownBlocks: bInitial, Exclusions: 1, Height: f.height, EligibleHeight: f.height + bInitial,
	}, *evs[0])
}

func TestBreakerDoesNotExcludeAtExactlyThreshold(t *testing.T) {
	f := newBreakerFixture(t, breakerParams())
	f.feed(1, "ooom") // 1 of 4 = 25%: not above
	h := f.health(1)
	require.Equal(t, types.HEALTH_STATE_HEALTHY, h.State)
	require.Equal(t, uint32(4), h.TrafficSamples)
	require.Equal(t, uint32(1), h.TrafficMisses)
	require.Positive(t, f.offered(400)[bech(1)])
}

func TestBreakerDoesNotExcludeBelowMinSamples(t *testing.T) {
	f := newBreakerFixture(t, breakerParams())
	f.feed(1, "omm") // 2 of 3 = 67%, but only 3 samples and 2 in a row
	h := f.health(1)
	require.Equal(t, types.HEALTH_STATE_HEALTHY, h.State)
	require.Equal(t, uint32(3), h.TrafficSamples)
	f.feed(1, "o") // the fourth sample: 2 of 4 = 50%
	require.Equal(t, types.HEALTH_STATE_EXCLUDED, f.health(1).State)
}

func TestBreakerPromotesToProbeAfterInitialCooldown(t *testing.T) {
	f := newBreakerFixture(t, breakerParams())
	f.feed(1, "mmm")
	excludedAt := f.height
	f.runUntil(bInitial-1, func() bool { return f.height == excludedAt+bInitial-1 })
	require.Equal(t, types.HEALTH_STATE_EXCLUDED, f.health(1).State)
	// A query at this height answers for the next block, where the step
	// promotes it: the probe is offered already.
	resp := f.drawUntil(1)
	require.True(t, resp.Probe)
	f.next()
	h := f.health(1)
	require.Equal(t, types.HEALTH_STATE_PROBE, h.State)
	require.Equal(t, types.HEALTH_REASON_COOLDOWN_PASSED, h.Reason)
	require.Equal(t, excludedAt+bInitial, h.SinceHeight)
}

func TestProbeSuccessRestoresHealthy(t *testing.T) {
	f := newBreakerFixture(t, breakerParams())
	f.feed(1, "mmm")
	f.runUntil(bInitial+1, func() bool { return f.health(1).State == types.HEALTH_STATE_PROBE })
	f.mustStart("probe", 1, "m")
	require.Equal(t, "probe", f.health(1).ProbeInferenceId)
	require.Len(t, typedEvents[*types.EventProbeStarted](t, f.ctx), 1)
	require.NoError(t, f.finish(1, "probe"))
	f.next()
	h := f.health(1)
	require.Equal(t, types.HEALTH_STATE_HEALTHY, h.State)
	require.Equal(t, types.HEALTH_REASON_PROBE_SUCCEEDED, h.Reason)
	require.Zero(t, h.TrafficSamples, "a restored executor starts with an empty window")
	require.Equal(t, uint32(1), h.Exclusions)
	require.Empty(t, h.ProbeInferenceId)
	require.Positive(t, f.offered(400)[bech(1)])
}

func TestProbeMissReExcludesWithDoubledCooldown(t *testing.T) {
	f := newBreakerFixture(t, breakerParams())
	f.feed(1, "mmm")
	f.runUntil(bInitial+1, func() bool { return f.health(1).State == types.HEALTH_STATE_PROBE })
	f.feed(1, "m") // the probe expires
	h := f.health(1)
	require.Equal(t, types.HEALTH_STATE_EXCLUDED, h.State)
	require.Equal(t, types.HEALTH_REASON_PROBE_MISSED, h.Reason)
	require.Equal(t, uint64(2*bInitial), h.CooldownBlocks)
	require.Equal(t, uint32(2), h.Exclusions)
	require.Equal(t, f.height+2*bInitial, h.EligibleHeight)
}

func TestCooldownDoublingIsCappedAtMax(t *testing.T) {
	f := newBreakerFixture(t, breakerParams())
	f.feed(1, "mmm")
	var cooldowns []uint64
	for range 4 {
		cooldowns = append(cooldowns, f.health(1).CooldownBlocks)
		f.runUntil(bMax+1, func() bool { return f.health(1).State == types.HEALTH_STATE_PROBE })
		f.feed(1, "m")
	}
	require.Equal(t, []uint64{bInitial, 2 * bInitial, 4 * bInitial, bMax}, cooldowns)
	require.Equal(t, uint64(bMax), f.health(1).CooldownBlocks)
}

func TestEpochBoundaryClearsAllBreakerState(t *testing.T) {
	f := newBreakerFixture(t, breakerParams())
	f.feed(1, "mmm") // EXCLUDED
	f.feed(2, "mmm") // EXCLUDED, later PROBE with a probe in flight
	f.feed(3, "om")  // HEALTHY with a recent miss on record
	f.runUntil(bInitial+1, func() bool { return f.health(2).State == types.HEALTH_STATE_PROBE })
	f.mustStart("probe-2", 2, "m")
	f.mustStart("pending-3", 3, "m")
	require.NoError(t, f.finish(3, "pending-3")) // queued, not yet applied
	f.end()
	f.advanceTo(int64(breakerParams().EpochLength)) // the last block of epoch 1
	f.mustStart("late", 4, "m")
	f.end()
	f.begin(1 + int64(breakerParams().EpochLength))
	require.Equal(t, uint64(2), f.epoch.Index)

	requireBreakerEmpty(t, f)
	for i := byte(1); i <= 4; i++ {
		require.Equal(t, types.HEALTH_STATE_HEALTHY, f.health(i).State)
	}
	got := f.offered(400)
	require.Len(t, got, 4, "everyone is offered again")
}

func TestAllCandidatesExcludedBypassesFilterNeverEmpty(t *testing.T) {
	p := breakerParams()
	p.HealthCbMaxExcludedWeightPct = 100
	p.HealthCbInitialCooldownBlocks, p.HealthCbMaxCooldownBlocks = 100, 100 // nobody probes yet
	f := newBreakerFixture(t, p)
	for i := byte(1); i <= 4; i++ {
		f.feed(i, "mmm")
	}
	require.Len(t, f.notHealthy(), 4)
	for seed := uint64(0); seed < 50; seed++ {
		d := f.draw("m", seed) // the pool is never empty
		require.True(t, d.HealthFallback)
		require.Equal(t, uint32(4), d.Candidates)
	}
	// Enforcement agrees with selection: in the fallback, excluded
	// executors take inferences.
	f.next()
	f.next()
	f.mustStart("fallback", 1, "m")
}
