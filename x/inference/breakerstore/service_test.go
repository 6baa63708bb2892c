package breakerstore_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/inferenced/inferenced/x/inference/service"
	"github.com/inferenced/inferenced/x/inference/types"
)

// encodedRates is the fixture's next service rates in group order.
func (f *fixture) encodedRates() []byte {
	f.t.Helper()
	rates := make([]service.Report, len(f.group.execs))
	for b, r := range f.rates {
		i, ok, err := f.group.MemberIndex(f.ctx, addr(b))
		require.NoError(f.t, err)
		require.True(f.t, ok)
		rates[i] = r
	}
	bz, err := service.Encode(rates)
	require.NoError(f.t, err)
	return bz
}

// runServing runs blocks whose steps each apply the service rates given
// (members not named at 0%).
func (f *fixture) runServing(blocks int, rates map[byte]service.Report) {
	f.t.Helper()
	for range blocks {
		f.rates = rates
		f.next()
	}
}

// S1 at the store: an executor whose canaries fail while its health
// endpoint answers, with no client traffic at all, is excluded on service
// samples after the service rule's run of misses.
func TestDegradedExecutorIsExcludedOnServiceAlone(t *testing.T) {
	f := newBreakerFixture(t, breakerParams())
	run := int(f.params.HealthCbServiceConsecutiveMisses)
	f.runServing(run-1, map[byte]service.Report{1: 40})
	require.Equal(t, types.HEALTH_STATE_HEALTHY, f.health(1).State, "one block short of the run")
	f.runServing(1, map[byte]service.Report{1: 40})
	h := f.health(1)
	require.Equal(t, types.HEALTH_STATE_EXCLUDED, h.State)
	require.Equal(t, types.SAMPLE_KIND_SERVICE, h.Evidence)
	require.Equal(t, types.HEALTH_REASON_CONSECUTIVE_MISSES, h.Reason)
	require.Equal(t, uint64(0), f.missed(1), "no traffic miss was counted")
	for _, b := range []byte{2, 3, 4} {
		require.Equal(t, types.HEALTH_STATE_HEALTHY, f.health(b).State)
	}
}

// The canaries decide the probe of an executor they excluded: it is never
// offered to an agent (attack: a griefer taking the probe slot and letting
// it expire, or an agent's probe success restoring a still-failing
// executor), and it is restored by the first service ok after its cooldown.
func TestServiceExclusionIsRestoredByCanariesWithoutAProbeInference(t *testing.T) {
	f := newBreakerFixture(t, breakerParams())
	f.runServing(int(f.params.HealthCbServiceConsecutiveMisses), map[byte]service.Report{1: 40})
	require.Equal(t, types.HEALTH_STATE_EXCLUDED, f.health(1).State)
	eligible := f.health(1).EligibleHeight
	f.advanceTo(eligible)
	require.Equal(t, types.HEALTH_STATE_PROBE, f.health(1).State)
	_, err := f.start(f.newID(), 1, "m")
	require.Error(t, err, "an agent's start on a PROBE the canaries decide")
	for range 20 {
		require.NotEqual(t, addr(1).String(), f.draw("m", uint64(f.height)).Executor, "never offered to selection")
	}
	f.runServing(1, map[byte]service.Report{1: 40})
	require.Equal(t, types.HEALTH_STATE_EXCLUDED, f.health(1).State, "still failing: re-excluded")
	require.Equal(t, types.HEALTH_REASON_PROBE_MISSED, f.health(1).Reason)
	f.advanceTo(f.health(1).EligibleHeight)
	f.runServing(1, map[byte]service.Report{})
	h := f.health(1)
	require.Equal(t, types.HEALTH_STATE_HEALTHY, h.State)
	require.Equal(t, types.HEALTH_REASON_SERVICE_OK, h.Reason)
}

// S2: a rise that every executor shows (the validators' view of the whole
// network degraded) excludes nobody, since each rate is compared with the
// peers' median; the one executor standing out above that rise is caught.
func TestNetworkWideRiseExcludesNoOneThroughService(t *testing.T) {
	f := newBreakerFixture(t, breakerParams())
	all := map[byte]service.Report{1: 40, 2: 45, 3: 40, 4: 42}
	f.runServing(20, all)
	for _, b := range []byte{1, 2, 3, 4} {
		require.Equal(t, types.HEALTH_STATE_HEALTHY, f.health(b).State, "executor %d", b)
	}
	require.Zero(t, f.applied.ServiceMisses)
	all[3] = 90
	f.runServing(int(f.params.HealthCbServiceConsecutiveMisses), all)
	require.Equal(t, types.HEALTH_STATE_EXCLUDED, f.health(3).State)
}

// Framing: an executor that drops one agent's requests while the canaries
// see it failing cannot get that agent charged: a service miss corroborates
// the traffic misses in flight, as an attested miss does.
func TestServiceMissCorroboratesHeldTrafficMisses(t *testing.T) {
	f := newEvidenceFixture(t)
	f.send(agentByte, 1, false) // never finished: expires and is held
	f.next()
	f.next()
	require.NotZero(t, f.health(1).HeldMisses, "one agent's miss is held")
	f.runServing(1, map[byte]service.Report{1: 60})
	require.Zero(t, f.health(1).HeldMisses, "the service miss corroborated it")
	require.Equal(t, uint64(1), f.missed(1), "counted against the executor, not the agent")
}

func TestPeerMedian(t *testing.T) {
	u := service.Unknown
	for _, tc := range []struct {
		name  string
		rates []service.Report
		want  service.Report
		ok    bool
	}{
		{"all 0%", []service.Report{0, 0, 0}, 0, true},
		{"one outlier", []service.Report{0, 0, 90}, 0, true},
		{"a rise every executor shows", []service.Report{40, 45, 40, 42}, 40, true},
		{"unknowns are not peers", []service.Report{u, u, 30, 50}, 30, true},
		{"no rate", []service.Report{u, u}, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bz, err := service.Encode(tc.rates)
			require.NoError(t, err)
			got, ok, err := service.PeerMedian(bz, len(tc.rates))
			require.NoError(t, err)
			require.Equal(t, tc.ok, ok)
			require.Equal(t, tc.want, got)
		})
	}
}
