package app

import (
	"testing"

	"github.com/stretchr/testify/require"

	inferencemodule "github.com/inferenced/inferenced/x/inference/module"
	inferencetypes "github.com/inferenced/inferenced/x/inference/types"
)

// An upgrade handler's RunMigrations takes a version-2 x/inference store
// (no traffic trip rule, no inference retention, no service rule) to the
// module's ConsensusVersion through the registered steps 2 to 3, 3 to 4,
// 4 to 5, 5 to 6 and 6 to 7: the wiring, not only the migrator, is in place.
func TestRunMigrationsTakesInferenceFromVersion2(t *testing.T) {
	a, ctx := newTestApp(t)
	v2 := inferencetypes.DefaultParams()
	v2.HealthCbTrafficWindowSamples, v2.HealthCbTrafficMinSamples = 0, 0
	v2.HealthCbTrafficMissThresholdPct, v2.HealthCbTrafficConsecutiveMisses = 0, 0
	v2.InferenceRetentionEpochs = 0
	v2.HealthCbServiceWindowSamples, v2.HealthCbServiceMinSamples, v2.HealthCbServiceExcessPct = 0, 0, 0
	v2.HealthCbServiceMissThresholdPct, v2.HealthCbServiceConsecutiveMisses = 0, 0
	require.NoError(t, a.InferenceKeeper.Params.Set(ctx, v2))

	from := a.ModuleManager.GetVersionMap()
	from[inferencetypes.ModuleName] = 2
	to, err := a.ModuleManager.RunMigrations(ctx, a.configurator, from)
	require.NoError(t, err)
	require.Equal(t, uint64(inferencemodule.ConsensusVersion), to[inferencetypes.ModuleName])
	require.Equal(t, uint64(7), to[inferencetypes.ModuleName])
	got, err := a.InferenceKeeper.Params.Get(ctx)
	require.NoError(t, err)
	require.Equal(t, inferencetypes.DefaultParams(), got, "the traffic rule, the retention and the service rule defaulted, the rest as stored")
	from6, set, err := a.InferenceKeeper.BundleV3Switch(ctx)
	require.NoError(t, err)
	require.True(t, set)
	require.Equal(t, int64(2), from6, "HEALTH3 from the block after the migrating one")
}
