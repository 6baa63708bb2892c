package keeper

import (
	"fmt"

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
// evidence ledger starts empty); the outcomes queued by the last version-1
// block get their inference's agent and end height.
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
	if err := p.Validate(); err != nil {
		return fmt.Errorf("migrated params: %w", err)
	}
	if err := m.k.Params.Set(ctx, p); err != nil {
		return fmt.Errorf("store migrated params: %w", err)
	}
	return m.k.health.AttributePending(ctx, m.k.Inferences.Get)
}
