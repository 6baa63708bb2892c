package breakerstore_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/inferenced/inferenced/x/inference/types"
)

// Trip rules of these tests, different per kind and from every default, so
// a param read for the wrong kind shows: traffic trips on 6 misses in a
// row (or over 25% of at least 12 of the last 24), attested on 2 in a row
// (or over 25% of at least 4 of the last 8).
const (
	kTrafficWindow, kTrafficMin, kTrafficConsecutive    = 24, 12, 6
	kAttestedWindow, kAttestedMin, kAttestedConsecutive = 8, 4, 2
)

func kindRuleParams() types.Params {
	p := breakerParams()
	p.HealthCbMaxExcludedWeightPct = 100
	p.HealthCbTrafficWindowSamples, p.HealthCbTrafficMinSamples = kTrafficWindow, kTrafficMin
	p.HealthCbTrafficConsecutiveMisses = kTrafficConsecutive
	p.HealthCbWindowSamples, p.HealthCbMinSamples = kAttestedWindow, kAttestedMin
	p.HealthCbConsecutiveMisses = kAttestedConsecutive
	return p
}

// Traffic misses are judged by the health_cb_traffic_* rule, attested ones
// by the unprefixed health_cb_* rule: a run of traffic misses that the attested rule would
// trip on leaves the executor serving until the traffic rule's run is
// reached, and two attested misses exclude at once.
func TestEachSampleKindTripsOnItsOwnRule(t *testing.T) {
	f := newBreakerFixture(t, kindRuleParams())

	f.feed(1, "mmmmm")
	require.Equal(t, types.HEALTH_STATE_HEALTHY, f.health(1).State, "5 traffic misses in a row, the traffic rule wants 6")
	f.feed(1, "m")
	h := f.health(1)
	require.Equal(t, types.HEALTH_STATE_EXCLUDED, h.State)
	require.Equal(t, types.HEALTH_REASON_CONSECUTIVE_MISSES, h.Reason)
	require.Equal(t, types.SAMPLE_KIND_TRAFFIC, h.Evidence)

	f.attest(2, true)
	f.next()
	require.Equal(t, types.HEALTH_STATE_HEALTHY, f.health(2).State, "one attested miss")
	f.attest(2, true)
	f.next()
	h = f.health(2)
	require.Equal(t, types.HEALTH_STATE_EXCLUDED, h.State, "two attested misses in a row")
	require.Equal(t, types.HEALTH_REASON_CONSECUTIVE_MISSES, h.Reason)
	require.Equal(t, types.SAMPLE_KIND_ATTESTED, h.Evidence)
}

// The health queries count each kind over its own window: the traffic
// counts over health_cb_traffic_window_samples, the attested ones over
// health_cb_window_samples.
func TestHealthQueryCountsEachKindOverItsWindow(t *testing.T) {
	f := newBreakerFixture(t, kindRuleParams())
	f.feed(3, "oooooooooooooooooooooooooooooo") // 30 successes, no record yet
	f.feed(3, "m")                              // the record starts with them
	for range 10 {
		f.attest(3, false)
		f.next()
	}
	h := f.health(3)
	require.Equal(t, types.HEALTH_STATE_HEALTHY, h.State)
	require.Equal(t, uint32(kTrafficWindow), h.TrafficSamples)
	require.Equal(t, uint32(1), h.TrafficMisses)
	require.Equal(t, uint32(kAttestedWindow), h.AttestedSamples)
	require.Zero(t, h.AttestedMisses)
}

// The evidence ledger remembers the traffic window: one agent's
// uncorroborated misses (the default two-agent rule) are held up to
// health_cb_traffic_window_samples of them, whatever the attested window.
func TestLedgerHoldsATrafficWindow(t *testing.T) {
	f := newEvidenceFixture(t, func(p *types.Params) {
		*p = kindRuleParams()
		p.HealthCbTrafficMinAgents = types.DefaultHealthCBTrafficMinAgents
		p.TransferAgentMissAllowance = types.MaxTransferAgentMissAllowance
	})
	for range kTrafficWindow + 6 {
		f.send(agentA, 4, false)
		f.next()
	}
	f.next()
	f.next()
	h := f.health(4)
	require.Equal(t, types.HEALTH_STATE_HEALTHY, h.State, "one agent's word alone excludes no one")
	require.Equal(t, uint32(kTrafficWindow), h.HeldMisses)
}
