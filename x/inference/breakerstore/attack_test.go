package breakerstore_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/inferenced/inferenced/x/inference/types"
)

// Attack: a transfer agent keeps routing to an executor the breaker has
// excluded. One block of grace covers a start chosen from the state before
// the exclusion; after that the start is refused.
func TestAttackStartOnExcludedExecutorRefusedAfterOneBlockGrace(t *testing.T) {
	f := newBreakerFixture(t, breakerParams())
	f.feed(1, "mmm")
	excludedAt := f.height
	require.Equal(t, types.HEALTH_STATE_EXCLUDED, f.health(1).State)
	f.mustStart("grace-0", 1, "m") // the query that chose it read block excludedAt-1
	f.next()
	f.mustStart("grace-1", 1, "m")
	f.next()
	require.Equal(t, excludedAt+2, f.height)
	_, err := f.start("refused", 1, "m")
	require.ErrorIs(t, err, types.ErrExecutorNotRoutable)
	require.ErrorContains(t, err, "excluded by the circuit breaker until block")
	require.Empty(t, f.health(1).ProbeInferenceId, "a start on an EXCLUDED executor is not a probe")
}

// Attack: flood a recovering executor with requests. A PROBE executor holds
// one probe slot; while it is taken selection skips it and starts are refused.
func TestAttackSecondProbeRefusedWhileSlotTaken(t *testing.T) {
	f := newBreakerFixture(t, breakerParams())
	f.feed(1, "mmm")
	f.runUntil(bInitial+1, func() bool { return f.health(1).State == types.HEALTH_STATE_PROBE })
	f.mustStart("probe-1", 1, "m")
	_, err := f.start("probe-2", 1, "m")
	require.ErrorIs(t, err, types.ErrExecutorNotRoutable)
	require.ErrorContains(t, err, `probe slot is taken by inference "probe-1"`)
	f.next()
	require.Zero(t, f.offered(400)[bech(1)], "a PROBE executor with its slot taken is not offered")
	_, err = f.start("probe-3", 1, "m")
	require.ErrorIs(t, err, types.ErrExecutorNotRoutable)
}

// Attack: an executor (or its agent) finishes a request that was in flight
// before the exclusion to pass for recovered. Only the probe's own outcome
// is the probe result, and a stale miss does not re-exclude either.
func TestAttackStaleOutcomeIsNotTakenAsProbeResult(t *testing.T) {
	p := breakerParams()
	p.ExpirationBlocks = 30
	f := newBreakerFixture(t, p)
	f.mustStart("stale-ok", 1, "m")
	f.mustStart("stale-miss", 1, "m")
	for range 3 {
		f.attest(1, true)
		f.next()
	}
	require.Equal(t, types.HEALTH_STATE_EXCLUDED, f.health(1).State)
	f.runUntil(bInitial+1, func() bool { return f.health(1).State == types.HEALTH_STATE_PROBE })

	require.NoError(t, f.finish(1, "stale-ok"))
	f.next()
	require.Equal(t, types.HEALTH_STATE_PROBE, f.health(1).State, "a pre-exclusion request is not the probe")

	f.mustStart("probe", 1, "m")
	f.runUntil(int(p.ExpirationBlocks)+2, func() bool {
		return f.inferences["stale-miss"].Status == types.INFERENCE_STATUS_EXPIRED
	})
	f.next()
	h := f.health(1)
	require.Equal(t, types.HEALTH_STATE_PROBE, h.State, "a stale miss does not re-exclude")
	require.Equal(t, "probe", h.ProbeInferenceId)

	require.NoError(t, f.finish(1, "probe"))
	f.next()
	require.Equal(t, types.HEALTH_STATE_HEALTHY, f.health(1).State)
	require.Equal(t, types.HEALTH_REASON_PROBE_SUCCEEDED, f.health(1).Reason)
}

// Attack: a restored executor is pushed out again on the misses that got it
// excluded in the first place. Windows start empty on every state change.
func TestRestoredExecutorIsNotReExcludedByOldMisses(t *testing.T) {
	f := newBreakerFixture(t, breakerParams())
	f.feed(1, "omom")
	require.Equal(t, types.HEALTH_STATE_EXCLUDED, f.health(1).State)
	f.runUntil(bInitial+1, func() bool { return f.health(1).State == types.HEALTH_STATE_PROBE })
	f.feed(1, "o") // the probe
	require.Equal(t, types.HEALTH_STATE_HEALTHY, f.health(1).State)
	f.feed(1, "m") // with the old window: 3 misses of 6
	h := f.health(1)
	require.Equal(t, types.HEALTH_STATE_HEALTHY, h.State)
	require.Equal(t, uint32(1), h.TrafficSamples)
	require.Equal(t, uint32(1), h.TrafficMisses)
}

// A long record of successes does not shield an executor that has just gone
// dark: three misses in a row trip it. The window of an executor the breaker
// held nothing on starts with the successes its epoch stats already count.
func TestThreeConsecutiveMissesTripAfterLongSuccessHistory(t *testing.T) {
	f := newBreakerFixture(t, breakerParams())
	for range 40 {
		id := f.newID()
		f.mustStart(id, 1, "m")
		require.NoError(t, f.finish(1, id))
	}
	f.next()
	require.Equal(t, uint64(40), f.finished(1))
	f.feed(1, "mm")
	h := f.health(1)
	require.Equal(t, types.HEALTH_STATE_HEALTHY, h.State)
	require.Equal(t, uint32(16), h.TrafficSamples, "the window begins full of the counted successes")
	require.Equal(t, uint32(2), h.TrafficMisses)
	f.feed(1, "m")
	h = f.health(1)
	require.Equal(t, types.HEALTH_STATE_EXCLUDED, h.State)
	require.Equal(t, types.HEALTH_REASON_CONSECUTIVE_MISSES, h.Reason)
}
