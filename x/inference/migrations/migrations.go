// Package migrations holds what the x/inference store migrations share:
// the layout of the versions before 4 (inferences keyed by id alone) and
// the params each step fills so that it stores params this binary
// validates. Each step is a package of its own: v2 (1 to 2), v3 (2 to 3),
// v4 (3 to 4), v5 (4 to 5), v6 (5 to 6), v7 (6 to 7); the module registers them. A migration reads and writes
// the keeper's collections and changes the breaker's records only through
// breakerstore.Store's rewrite methods, which keep its indexes.
package migrations

import (
	"fmt"

	"cosmossdk.io/collections"

	"github.com/cosmos/cosmos-sdk/codec"
	sdk "github.com/cosmos/cosmos-sdk/types"

	"github.com/inferenced/inferenced/x/inference/keeper"
	"github.com/inferenced/inferenced/x/inference/types"
)

// V3Layout is the inference layout of versions 1 to 3 (ids global), read
// on the same prefixes with the old key codecs: inferences by id, the
// expiry queue by (expiration height, id).
type V3Layout struct {
	Inferences collections.Map[string, types.Inference]
	Expiry     collections.KeySet[collections.Pair[int64, string]]
}

// NewV3Layout declares the version-3 collections in a schema of their own
// (the keeper's schema holds the version-4 ones on the same prefixes).
func NewV3Layout(k keeper.Keeper) V3Layout {
	sb := collections.NewSchemaBuilder(k.StoreService())
	return V3Layout{
		Inferences: collections.NewMap(sb, types.InferencesPrefix, "inferences_v3", collections.StringKey, codec.CollValue[types.Inference](k.Codec())),
		Expiry:     collections.NewKeySet(sb, types.ExpiryQueuePrefix, "expiry_queue_v3", collections.PairKeyCodec(collections.Int64Key, collections.StringKey)),
	}
}

// FillTrafficRule gives each unset (zero, as a store written before
// version 3 decodes) traffic trip-rule param its default. Zero is never a
// valid value for any of the four, so no value governance set is replaced.
func FillTrafficRule(p *types.Params) {
	d := types.DefaultParams()
	if p.HealthCbTrafficWindowSamples == 0 {
		p.HealthCbTrafficWindowSamples = d.HealthCbTrafficWindowSamples
	}
	if p.HealthCbTrafficMinSamples == 0 {
		p.HealthCbTrafficMinSamples = d.HealthCbTrafficMinSamples
	}
	if p.HealthCbTrafficMissThresholdPct == 0 {
		p.HealthCbTrafficMissThresholdPct = d.HealthCbTrafficMissThresholdPct
	}
	if p.HealthCbTrafficConsecutiveMisses == 0 {
		p.HealthCbTrafficConsecutiveMisses = d.HealthCbTrafficConsecutiveMisses
	}
}

// FillRetention gives inference_retention_epochs, which a store written
// before version 4 lacks (zero, never valid), its default.
func FillRetention(p *types.Params) {
	if p.InferenceRetentionEpochs == 0 {
		p.InferenceRetentionEpochs = types.DefaultInferenceRetentionEpochs
	}
}

// FillParticipantBonds gives the participant bond params, which a store
// written before version 4 lacks (unset, never valid), their defaults.
func FillParticipantBonds(p *types.Params) {
	d := types.DefaultParams()
	if p.ParticipantMinBond.Denom == "" || p.ParticipantMinBond.Amount.IsNil() {
		p.ParticipantMinBond = d.ParticipantMinBond
	}
	if p.ParticipantBondPerWeight.IsNil() || p.ParticipantBondPerWeight.IsZero() {
		p.ParticipantBondPerWeight = d.ParticipantBondPerWeight
	}
}

// FillServiceRule gives the health_cb_service_* params, which a store
// written before version 5 lacks (zero, never valid for any of the five),
// their defaults; a value governance set is kept.
func FillServiceRule(p *types.Params) {
	d := types.DefaultParams()
	for _, f := range []struct{ v, def *uint64 }{
		{&p.HealthCbServiceWindowSamples, &d.HealthCbServiceWindowSamples},
		{&p.HealthCbServiceMinSamples, &d.HealthCbServiceMinSamples},
		{&p.HealthCbServiceMissThresholdPct, &d.HealthCbServiceMissThresholdPct},
		{&p.HealthCbServiceConsecutiveMisses, &d.HealthCbServiceConsecutiveMisses},
		{&p.HealthCbServiceExcessPct, &d.HealthCbServiceExcessPct},
	} {
		if *f.v == 0 {
			*f.v = *f.def
		}
	}
}

// StoreParams validates migrated params and stores them: a migration never
// leaves params the chain would refuse. Every step stores params this
// binary validates, so each fills what later versions added as well (zero
// is never valid for them).
func StoreParams(ctx sdk.Context, k keeper.Keeper, p types.Params) error {
	FillRetention(&p)
	FillParticipantBonds(&p)
	FillServiceRule(&p)
	if err := p.Validate(); err != nil {
		return fmt.Errorf("migrated params: %w", err)
	}
	if err := k.Params.Set(ctx, p); err != nil {
		return fmt.Errorf("store migrated params: %w", err)
	}
	return nil
}
