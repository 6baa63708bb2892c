package keeper_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/inferenced/inferenced/x/inference/types"
)

// withoutServiceRule is params as a store written before version 5
// decodes them: no health_cb_service_* params.
func withoutServiceRule(p *types.Params) {
	p.HealthCbServiceWindowSamples, p.HealthCbServiceMinSamples = 0, 0
	p.HealthCbServiceMissThresholdPct, p.HealthCbServiceConsecutiveMisses, p.HealthCbServiceExcessPct = 0, 0, 0
}

// A version-4 store has no service params: the migration gives them their
// defaults, leaves every other param as stored, and leaves the breaker's
// records as they are (a version-4 record has no service window).
func TestMigrate4to5GivesServiceItsRule(t *testing.T) {
	f := newFixture(t)
	v4 := testParams()
	v4.HealthCbTrafficWindowSamples = 32 // as governance set it on version 4
	withoutServiceRule(&v4)
	require.Error(t, v4.Validate(), "version-4 params no longer validate")
	require.NoError(t, f.k.Params.Set(f.ctx, v4))
	rec := types.ExecutorHealth{
		Address: bech(0x70), State: types.HEALTH_STATE_EXCLUDED, Evidence: types.SAMPLE_KIND_ATTESTED,
		Reason: types.HEALTH_REASON_CONSECUTIVE_MISSES, SinceHeight: 5, ExcludedAt: 5, CooldownBlocks: 50, Exclusions: 1,
	}
	require.NoError(t, f.k.Breaker().Restore(f.ctx, rec))

	require.NoError(t, newMigrator(*f.k).Migrate4to5(f.ctx))
	got, err := f.k.Params.Get(f.ctx)
	require.NoError(t, err)
	require.NoError(t, got.Validate())
	want := v4
	d := types.DefaultParams()
	want.HealthCbServiceWindowSamples, want.HealthCbServiceMinSamples = d.HealthCbServiceWindowSamples, d.HealthCbServiceMinSamples
	want.HealthCbServiceMissThresholdPct, want.HealthCbServiceConsecutiveMisses = d.HealthCbServiceMissThresholdPct, d.HealthCbServiceConsecutiveMisses
	want.HealthCbServiceExcessPct = d.HealthCbServiceExcessPct
	require.Equal(t, want, got, "service rule defaulted, everything else as stored")

	var after []types.ExecutorHealth
	require.NoError(t, f.k.Breaker().EachRecord(f.ctx, func(h types.ExecutorHealth) error { after = append(after, h); return nil }))
	require.Equal(t, []types.ExecutorHealth{rec}, after, "records untouched")
	require.NoError(t, f.k.Breaker().Invariants(f.ctx))
}

// A service rule governance already set is kept.
func TestMigrate4to5KeepsASetServiceRule(t *testing.T) {
	f := newFixture(t)
	set := testParams()
	set.HealthCbServiceWindowSamples, set.HealthCbServiceExcessPct = 12, 30
	require.NoError(t, f.k.Params.Set(f.ctx, set))
	require.NoError(t, newMigrator(*f.k).Migrate4to5(f.ctx))
	got, err := f.k.Params.Get(f.ctx)
	require.NoError(t, err)
	require.Equal(t, set, got)
}
