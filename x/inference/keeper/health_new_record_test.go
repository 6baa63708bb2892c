package keeper_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/inferenced/inferenced/x/inference/types"
)

// A record the step's traffic creates hears that block's attested ok: the
// pre-blocker maps oks for executors with a queued outcome too (the step
// applies traffic first), and a new record's attested history starts as a
// full window of oks, as when an attested miss creates it. Found by the
// simulator's keeper cross-check (sim/keeper_test.go).
func TestAttestedOKReachesARecordTheSameStepCreates(t *testing.T) {
	f := newEvidenceFixture(t)
	f.send(agentA, 1, false)
	f.next()
	f.end() // the miss expires and is queued for the next step
	require.Equal(t, types.HEALTH_STATE_HEALTHY, f.health(1).State)
	require.Zero(t, f.health(1).HeldMisses, "not applied yet")

	for _, m := range f.group().Members { // a bundle in which every executor is attested ok
		a, err := ac.StringToBytes(m.Address)
		require.NoError(t, err)
		f.attested = append(f.attested, attestation{executor: a})
	}
	f.begin(f.height + 1)
	require.Equal(t, [2]int{1, 0}, f.applied, "only the executor with a queued outcome gets its ok mapped")
	h := f.health(1)
	require.Equal(t, types.HEALTH_STATE_HEALTHY, h.State)
	require.Equal(t, uint32(1), h.HeldMisses)
	require.Equal(t, uint32(types.DefaultHealthCBWindowSamples), h.AttestedSamples,
		"a full attested window of oks, counted over the attested rule's window")
}

// In shadow mode (health_cb_enforce false) the breaker refuses no start:
// an agent whose probe expired uncorroborated may start on the executor
// again; that start is just not the probe. Found by the simulator's
// keeper cross-check.
func TestShadowModeRefusesNoProbeStart(t *testing.T) {
	f := newEvidenceFixture(t)
	excludeOnTraffic(t, f)
	f.send(agentA, 1, false) // the probe, left to expire
	f.next()
	f.next()
	require.Equal(t, types.HEALTH_STATE_PROBE, f.health(1).State)
	require.ErrorIs(t, f.startBy(agentA, f.newID(), 1), types.ErrProbeTaken, "enforced: refused")

	p, err := f.k.Params.Get(f.ctx)
	require.NoError(t, err)
	p.HealthCbEnforce = false
	require.NoError(t, f.k.Params.Set(f.ctx, p))
	require.NoError(t, f.startBy(agentA, f.newID(), 1), "shadow mode: accepted")
	require.Empty(t, f.health(1).ProbeInferenceId, "and not the probe")
}
