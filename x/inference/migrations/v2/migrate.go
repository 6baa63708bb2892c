// Package v2 migrates x/inference from version 1 (the previous release,
// before transfer agents) to version 2.
package v2

import (
	"errors"
	"fmt"

	"cosmossdk.io/collections"

	sdk "github.com/cosmos/cosmos-sdk/types"

	"github.com/inferenced/inferenced/x/inference/breaker"
	"github.com/inferenced/inferenced/x/inference/keeper"
	"github.com/inferenced/inferenced/x/inference/migrations"
	"github.com/inferenced/inferenced/x/inference/types"
)

// Migrate brings a version-1 store up to version 2: the params it lacks
// (the transfer-agent bond, registry bound, miss allowance and the
// corroboration rule) take their defaults, so the stored params validate
// again. Breaker records decode as they are (their evidence ledger starts
// empty), except that a record which has not changed state since it was
// created gets the full attested window this binary starts one with
// (fillAttestedWindows). The outcomes queued by the last version-1 block
// get their inference's agent and end height (attributePending).
//
// Each of those queued misses counts once. Version 1 counted a miss in its
// executor's epoch stats (MissedRequests) and ran the SPRT downtime check
// the moment it expired; this binary counts one only when the evidence
// ledger corroborates it, from the step of the upgrade block on, which
// would count these a second time. So the migration takes version 1's count
// of each queued miss back (never below zero; version 1 removes no
// participant, and one without a record has no stats): the miss then
// counts exactly when this binary's rule counts it, once if corroborated
// (always in the same epoch: the boundary drops what the ledger still
// holds), never if not. The SPRT verdict version 1 took with those misses
// stands: an executor it made INACTIVE stays so for the epoch (the SPRT
// runs only on ACTIVE ones, so the miss is never applied to it again, and
// the migration cannot tell which miss tipped it); for an ACTIVE one each
// recount checks no more misses, and no fewer successes, than a check
// version 1 already passed with that miss, so a miss never weighs twice in
// the test. Queued successes need nothing: both versions counted those at
// the finish, and the step only shows them to the breaker.
//
// Agents are not invented: until accounts register (or the upgrade handler
// registers them) every start is refused.
func Migrate(ctx sdk.Context, k keeper.Keeper) error {
	p, err := k.Params.Get(ctx)
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
	// pass on its way to version 3.
	migrations.FillTrafficRule(&p)
	if err := migrations.StoreParams(ctx, k, p); err != nil {
		return err
	}
	misses, err := attributePending(ctx, k)
	if err != nil {
		return fmt.Errorf("attribute pending samples: %w", err)
	}
	if err := uncountQueuedMisses(ctx, k, misses); err != nil {
		return err
	}
	if err := fillAttestedWindows(ctx, k); err != nil {
		return fmt.Errorf("fill attested windows: %w", err)
	}
	return nil
}

// attributePending gives every queued traffic outcome that has no agent
// (queued by a version-1 binary, before outcomes carried one) its
// inference's transfer agent and end height, read from the version-1
// layout (inferences keyed by id, as version 3's). The queue holds at most
// one block's outcomes, so this touches a few entries. Without it those
// outcomes would reach the evidence ledger as misses of no agent ending at
// height 0, which genesis validation rejects.
//
// It returns the executor of every miss it attributed, one entry per miss
// in queue order. A second run attributes nothing and returns nothing.
func attributePending(ctx sdk.Context, k keeper.Keeper) ([]sdk.AccAddress, error) {
	old := migrations.NewV3Layout(k)
	var misses []sdk.AccAddress
	err := k.Breaker().RewritePending(ctx, func(executor sdk.AccAddress, p types.PendingSample) (types.PendingSample, bool, error) {
		if p.Agent != "" {
			return p, false, nil
		}
		inf, err := old.Inferences.Get(ctx, p.InferenceId)
		if err != nil {
			return p, false, fmt.Errorf("inference %q of a pending sample: %w", p.InferenceId, err)
		}
		p.Agent, p.EndHeight = inf.TransferAgent, inf.EndHeight
		if p.Miss {
			misses = append(misses, executor)
		}
		return p, true, nil
	})
	return misses, err
}

// uncountQueuedMisses takes back one miss from the current epoch stats of
// the executor of each miss version 1 queued (one entry per miss), so the
// step's count of it is the only one. The status is left.
func uncountQueuedMisses(ctx sdk.Context, k keeper.Keeper, executors []sdk.AccAddress) error {
	for _, executor := range executors {
		p, err := k.Participants.Get(ctx, executor)
		if errors.Is(err, collections.ErrNotFound) {
			continue // no stats to take back (nor does the keeper count any)
		}
		if err != nil {
			return fmt.Errorf("load executor %s of a queued miss: %w", executor, err)
		}
		if p.CurrentEpochStats.MissedRequests == 0 {
			continue
		}
		p.CurrentEpochStats.MissedRequests--
		if err := k.SetParticipant(ctx, p); err != nil {
			return err
		}
	}
	return nil
}

// fillAttestedWindows gives every record that has not changed state since
// it was created (since height 0) a full attested window, keeping its
// samples: version 1 started the attested history of a record a traffic
// miss created empty, where this binary starts it as a full window of oks
// (judge.Fresh), so such a record would trip on two attested misses among
// its first few samples instead of the rule's run of misses. A record that
// changed state started its windows empty at the change in both versions
// (breaker.enter) and is left as it is; so is every state, gate and
// cooldown. Bits above a window's count are zero (Push shifts them in), so
// the samples it gains are oks.
func fillAttestedWindows(ctx sdk.Context, k keeper.Keeper) error {
	return k.Breaker().RewriteRecords(ctx, func(h types.ExecutorHealth) (types.ExecutorHealth, bool, error) {
		if h.SinceHeight != 0 || h.Attested.Count >= breaker.MaxWindow {
			return h, false, nil
		}
		h.Attested.Count = breaker.MaxWindow
		return h, true, nil
	})
}
