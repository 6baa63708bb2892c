package keeper_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/inferenced/inferenced/x/inference/types"
)

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
