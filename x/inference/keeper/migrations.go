package keeper

import (
	"errors"
	"fmt"

	"cosmossdk.io/collections"

	sdk "github.com/cosmos/cosmos-sdk/types"

	"github.com/inferenced/inferenced/x/inference/types"
)

// Migrator runs the module's store migrations.
type Migrator struct{ k Keeper }

// NewMigrator returns the migrator over the keeper.
func NewMigrator(k Keeper) Migrator { return Migrator{k: k} }

// Migrate1to2 brings a version-1 store (before transfer agents) up to
// version 2: the params it lacks (the transfer-agent bond, registry bound,
// miss allowance and the corroboration rule) take their defaults, so the
// stored params validate again. Breaker records decode as they are (their
// evidence ledger starts empty), except that a record which has not changed
// state since it was created gets the full attested window this binary
// starts one with (health.Store.FillAttestedWindows). The outcomes queued
// by the last version-1 block get their inference's agent and end height.
//
// Each of those queued misses counts once. Version 1 counted a miss in its
// executor's epoch stats (MissedRequests) and ran the SPRT downtime check
// the moment it expired; this binary counts one only when the evidence
// ledger corroborates it, from the step of the upgrade block on, which
// would count these a second time. So the migration takes version 1's count
// of each queued miss back (never below zero; version 1 removes no
// participant, and one without a record has no stats): the miss then counts exactly when this binary's rule counts it,
// once if corroborated (always in the same epoch: the boundary drops what
// the ledger still holds), never if not. The SPRT verdict version 1 took
// with those misses stands: an executor it made INACTIVE stays so for the
// epoch (the SPRT runs only on ACTIVE ones, so the miss is never applied
// to it again, and the migration cannot tell which miss tipped it); for an
// ACTIVE one each recount checks no more misses, and no fewer successes,
// than a check version 1 already passed with that miss, so a miss never
// weighs twice in the test. Queued successes need nothing: both versions
// counted those at the finish, and the step only shows them to the breaker.
//
// Agents are not invented: until accounts register (or the upgrade handler
// registers them) every start is refused.
func (m Migrator) Migrate1to2(ctx sdk.Context) error {
	p, err := m.k.Params.Get(ctx)
	if err != nil {
		return fmt.Errorf("load params: %w", err)
	}
	d := types.DefaultParams()
	if p.TransferAgentMinBond.Denom == "" || p.TransferAgentMinBond.Amount.IsNil() {
		p.TransferAgentMinBond = d.TransferAgentMinBond
	}
	if p.MaxTransferAgents == 0 {
		p.MaxTransferAgents = d.MaxTransferAgents
	}
	if p.TransferAgentMissAllowance == 0 && p.TransferAgentMissAllowancePct == 0 {
		p.TransferAgentMissAllowance = d.TransferAgentMissAllowance
		p.TransferAgentMissAllowancePct = d.TransferAgentMissAllowancePct
	}
	if p.HealthCbTrafficMinAgents == 0 {
		p.HealthCbTrafficMinAgents = d.HealthCbTrafficMinAgents
	}
	// A version-1 store lacks version 3's traffic trip rule as well, and
	// this binary validates it: fill it here too, or this step could never
	// pass on its way to Migrate2to3.
	fillTrafficRule(&p)
	if err := m.storeMigratedParams(ctx, p); err != nil {
		return err
	}
	// A version-1 store keys inferences by id alone, as version 3 does.
	misses, err := m.k.health.AttributePending(ctx, m.v3().inferences.Get)
	if err != nil {
		return fmt.Errorf("attribute pending samples: %w", err)
	}
	if err := m.uncountQueuedMisses(ctx, misses); err != nil {
		return err
	}
	if err := m.k.health.FillAttestedWindows(ctx); err != nil {
		return fmt.Errorf("fill attested windows: %w", err)
	}
	return nil
}

// uncountQueuedMisses takes back one miss from the current epoch stats of
// the executor of each miss version 1 queued (one entry per miss), so the
// step's count of it is the only one (Migrate1to2). The status is left.
func (m Migrator) uncountQueuedMisses(ctx sdk.Context, executors []sdk.AccAddress) error {
	for _, executor := range executors {
		p, err := m.k.Participants.Get(ctx, executor)
		if errors.Is(err, collections.ErrNotFound) {
			continue // no stats to take back (nor does countOutcome count any)
		}
		if err != nil {
			return fmt.Errorf("load executor %s of a queued miss: %w", executor, err)
		}
		if p.CurrentEpochStats.MissedRequests == 0 {
			continue
		}
		p.CurrentEpochStats.MissedRequests--
		if err := m.k.setParticipant(ctx, p); err != nil {
			return err
		}
	}
	return nil
}

// Migrate2to3 brings a version-2 store (one trip rule for both sample
// kinds) up to version 3: the health_cb_traffic_* params it lacks take
// their defaults, so traffic samples get their own, slower rule. The
// seed's four params keep their stored values and now govern attested
// samples only; a traffic param governance already set is kept. Breaker
// records decode as they are: a traffic window holds up to
// breaker.MaxWindow samples whatever the rule reads of it.
func (m Migrator) Migrate2to3(ctx sdk.Context) error {
	p, err := m.k.Params.Get(ctx)
	if err != nil {
		return fmt.Errorf("load params: %w", err)
	}
	fillTrafficRule(&p)
	return m.storeMigratedParams(ctx, p)
}

// fillTrafficRule gives each unset (zero, as a store written before
// version 3 decodes) traffic trip-rule param its default. Zero is never a
// valid value for any of the four, so no value governance set is replaced.
func fillTrafficRule(p *types.Params) {
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

// storeMigratedParams validates migrated params and stores them: a
// migration never leaves params the chain would refuse.
func (m Migrator) storeMigratedParams(ctx sdk.Context, p types.Params) error {
	// Every step stores params this binary validates, so each fills what
	// later versions added as well (zero is never valid for them).
	fillRetention(&p)
	fillParticipantBonds(&p)
	if err := p.Validate(); err != nil {
		return fmt.Errorf("migrated params: %w", err)
	}
	if err := m.k.Params.Set(ctx, p); err != nil {
		return fmt.Errorf("store migrated params: %w", err)
	}
	return nil
}
