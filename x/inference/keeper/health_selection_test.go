package keeper_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/inferenced/inferenced/x/inference/types"
)

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
