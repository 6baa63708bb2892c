package keeper_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/inferenced/inferenced/x/inference/types"
)

// withoutTrafficRule is params as a store written before version 3 decodes
// them: no health_cb_traffic_* trip rule.
func withoutTrafficRule(p *types.Params) {
	p.HealthCbTrafficWindowSamples, p.HealthCbTrafficMinSamples = 0, 0
	p.HealthCbTrafficMissThresholdPct, p.HealthCbTrafficConsecutiveMisses = 0, 0
}

// withDefaultTrafficRule is p with the default traffic trip rule.
func withDefaultTrafficRule(p types.Params) types.Params {
	d := types.DefaultParams()
	p.HealthCbTrafficWindowSamples, p.HealthCbTrafficMinSamples = d.HealthCbTrafficWindowSamples, d.HealthCbTrafficMinSamples
	p.HealthCbTrafficMissThresholdPct = d.HealthCbTrafficMissThresholdPct
	p.HealthCbTrafficConsecutiveMisses = d.HealthCbTrafficConsecutiveMisses
	return p
}

// A version-2 store has one trip rule, the unprefixed health_cb_* params, which
// governance may have tuned. The migration gives traffic samples the
// default traffic rule and leaves the four (now the attested rule) as
// stored.
func TestMigrate2to3GivesTrafficItsOwnRule(t *testing.T) {
	f := newFixture(t)
	v2 := testParams()
	v2.HealthCbWindowSamples, v2.HealthCbMinSamples = 20, 6 // as governance set them on version 2
	v2.HealthCbMissThresholdPct, v2.HealthCbConsecutiveMisses = 40, 5
	withoutTrafficRule(&v2)
	require.Error(t, v2.Validate(), "version-2 params no longer validate")
	require.NoError(t, f.k.Params.Set(f.ctx, v2))

	require.NoError(t, newMigrator(*f.k).Migrate2to3(f.ctx))
	got, err := f.k.Params.Get(f.ctx)
	require.NoError(t, err)
	require.NoError(t, got.Validate())
	require.Equal(t, withDefaultTrafficRule(v2), got, "traffic rule defaulted, everything else as stored")
	require.Equal(t, uint64(20), got.HealthCbWindowSamples)
	require.Equal(t, uint64(6), got.HealthCbMinSamples)
	require.Equal(t, uint64(40), got.HealthCbMissThresholdPct)
	require.Equal(t, uint64(5), got.HealthCbConsecutiveMisses)
}

// Run on a store whose traffic rule is already set (an operator re-running
// the upgrade, or governance having set it): nothing changes.
func TestMigrate2to3KeepsASetTrafficRule(t *testing.T) {
	f := newFixture(t)
	set := testParams()
	set.HealthCbTrafficWindowSamples, set.HealthCbTrafficMinSamples = 48, 12
	set.HealthCbTrafficMissThresholdPct, set.HealthCbTrafficConsecutiveMisses = 33, 7
	require.NoError(t, f.k.Params.Set(f.ctx, set))

	for range 2 {
		require.NoError(t, newMigrator(*f.k).Migrate2to3(f.ctx))
		got, err := f.k.Params.Get(f.ctx)
		require.NoError(t, err)
		require.Equal(t, set, got)
	}
}

// A version-2 store whose params the migration cannot make valid is
// refused, not stored: the upgrade stops instead of running a chain on
// params Validate rejects.
func TestMigrate2to3RefusesParamsItCannotRepair(t *testing.T) {
	f := newFixture(t)
	bad := testParams()
	withoutTrafficRule(&bad)
	bad.HealthCbTrafficWindowSamples = 65 // a set value out of range stays, and fails
	require.NoError(t, f.k.Params.Set(f.ctx, bad))

	err := newMigrator(*f.k).Migrate2to3(f.ctx)
	require.ErrorContains(t, err, "health_cb_traffic_window_samples")
	got, err := f.k.Params.Get(f.ctx)
	require.NoError(t, err)
	require.Equal(t, bad, got, "nothing stored")
}
