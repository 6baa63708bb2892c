package breakerstore_test

import (
	"testing"

	"github.com/inferenced/inferenced/x/inference/testutil/testkit"

	"github.com/stretchr/testify/require"

	"github.com/inferenced/inferenced/x/inference/types"
)

// A probe offered at weight 1 among a large total weight could wait for
// thousands of requests; it is offered at the healthy candidates' average
// weight (never above its own), so it is drawn about once per pool size.
func TestProbeIsOfferedAtTheAverageHealthyWeight(t *testing.T) {
	p := breakerParams()
	p.HealthCbMaxExcludedWeightPct = 100
	f := newBreakerFixture(t, p, member{5, 1000, []string{"m"}})
	f.feed(5, "mmm")
	f.runUntil(bInitial+1, func() bool { return f.health(5).State == types.HEALTH_STATE_PROBE })
	resp := f.drawUntil(5)
	require.True(t, resp.Probe)
	require.Equal(t, uint64(4*10+10), resp.TotalWeight, "offered at 10, the average of the healthy")
	n := uint64(4000)
	testkit.RequireNear(t, f.offered(n)[bech(5)], int(n), 10.0/50.0, "probe draws")
}
