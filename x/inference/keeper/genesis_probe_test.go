package keeper_test

import (
	"testing"

	sdk "github.com/cosmos/cosmos-sdk/types"
	"github.com/stretchr/testify/require"

	"github.com/inferenced/inferenced/x/inference/types"
)

// An export taken at a height where the probe finished or expired holds
// the probe on its record and its outcome queued for the next block's
// step. It validates and imports, and the imported chain's next block does
// what the live chain's does: the step applies the outcome and clears the
// probe.
func TestExportWithAProbeClosedInTheBlockRoundTrips(t *testing.T) {
	cases := []struct {
		name  string
		close func(f *fixture)
		want  types.HealthState
	}{
		{"finished", func(f *fixture) { require.NoError(t, f.finish(1, "probe")) }, types.HEALTH_STATE_HEALTHY},
		{"expired", func(f *fixture) { f.next() }, types.HEALTH_STATE_EXCLUDED}, // it expires in the next block's EndBlock
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newBreakerFixture(t)
			f.feed(1, "mmm")
			f.runUntil(bInitial+1, func() bool { return f.health(1).State == types.HEALTH_STATE_PROBE })
			f.mustStart("probe", 1, "m")
			tc.close(f)
			f.end()
			gs, err := f.k.ExportGenesis(f.ctx)
			require.NoError(t, err)
			rec, ok := f.census().Record(bech(1))
			require.True(t, ok)
			require.Equal(t, "probe", rec.ProbeInferenceId, "sanity: the probe still holds the slot")
			require.NotEqual(t, types.INFERENCE_STATUS_STARTED, f.inference("probe").Status)
			require.Len(t, gs.PendingSamples, 1, "sanity: its outcome is queued")

			k2, ctx2 := requireGenesisRoundTrip(t, *gs)

			next := f.height + 1
			f.begin(next)
			f.end()
			require.Equal(t, tc.want, f.health(1).State)
			ctx2 = ctx2.WithBlockHeight(next).WithEventManager(sdk.NewEventManager())
			_, _, err = k2.ApplyHealth(ctx2, 0, 0, nil, nil)
			require.NoError(t, err)
			require.NoError(t, k2.BeginBlock(ctx2))
			require.NoError(t, k2.EndBlock(ctx2))

			live, err := f.k.ExportGenesis(f.ctx)
			require.NoError(t, err)
			imported, err := k2.ExportGenesis(ctx2)
			require.NoError(t, err)
			require.Equal(t, live, imported, "the imported chain's next block is the live chain's")
			rec, ok = f.census().Record(bech(1))
			require.True(t, ok)
			require.Empty(t, rec.ProbeInferenceId, "the step cleared the probe")
		})
	}
}
