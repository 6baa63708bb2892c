// Package v4 migrates x/inference from version 3 (inference ids global,
// nothing pruned, participants unbonded) to version 4.
package v4

import (
	"context"
	"fmt"

	"cosmossdk.io/collections"

	sdk "github.com/cosmos/cosmos-sdk/types"

	"github.com/inferenced/inferenced/x/inference/keeper"
	"github.com/inferenced/inferenced/x/inference/migrations"
	"github.com/inferenced/inferenced/x/inference/types"
)

// Batch is how many version-3 entries Migrate holds in memory at once.
// Version 3 never deleted an inference, so its history grows with the
// chain's age, not with any bound the chain sets.
const Batch = 10_000

// Migrate brings a version-3 store up to version 4 (ids unique per transfer
// agent, closed inferences pruned):
//   - inference_retention_epochs takes its default;
//   - breaker records get their probe's transfer agent (probe_agent), read
//     from the version-3 layout before it is re-keyed;
//   - every inference is re-keyed by (transfer agent, id), and the expiry
//     queue by (expiration height, id, agent);
//   - each closed inference is indexed for pruning at end_height +
//     retention, and one already due at this height is deleted here (the
//     version-3 chain kept every inference it ever closed, so the first
//     upgrade block deletes the backlog once; later blocks prune only what
//     closed retention blocks before them);
//   - participants registered without a bond serve unbonded, capped at the
//     weight the minimum bond backs (migrateParticipants).
//
// It streams the version-3 history in batches of Batch, so its memory does
// not grow with the chain's age.
//
// It returns the first error, wrapped. Nothing rolls a failed migration
// back: x/upgrade runs the handler in the upgrade block's own state, the
// error fails the pre-blocker and so the block, and the node stops at the
// upgrade height with nothing of that block committed. So that a refused
// store is left as version 3 wrote it in any context, the migration first
// checks everything it can refuse (check, which writes nothing) and only
// then writes.
func Migrate(ctx sdk.Context, k keeper.Keeper) error {
	return MigrateInBatches(ctx, k, Batch)
}

// MigrateInBatches is Migrate holding at most batch version-3 entries in
// memory at once; the migrated store is the same for every batch of at
// least 1.
func MigrateInBatches(ctx sdk.Context, k keeper.Keeper, batch int) error {
	if batch < 1 {
		return fmt.Errorf("migration batch %d: must be at least 1", batch)
	}
	p, err := k.Params.Get(ctx)
	if err != nil {
		return fmt.Errorf("load params: %w", err)
	}
	old := migrations.NewV3Layout(k)
	if err := check(ctx, k, old); err != nil {
		return fmt.Errorf("version-3 store refused, nothing migrated: %w", err)
	}
	// The first write: it validates the params before storing them.
	if err := migrations.StoreParams(ctx, k, p); err != nil {
		return err
	}
	params, err := k.Params.Get(ctx)
	if err != nil {
		return fmt.Errorf("load migrated params: %w", err)
	}
	if err := attributeProbes(ctx, k, old); err != nil {
		return fmt.Errorf("attribute probes: %w", err)
	}
	if err := dropV3ExpiryQueue(ctx, old, batch); err != nil {
		return err
	}
	moved, pruned, err := rekeyInferences(ctx, k, old, params, batch)
	if err != nil {
		return err
	}
	if pruned > 0 {
		if err := k.Inferences().MarkPruned(ctx, ctx.BlockHeight()); err != nil {
			return err
		}
	}
	ctx.Logger().Debug("inferences migrated to version 4", "module", types.ModuleName, "rekeyed", moved, "pruned", pruned)
	return migrateParticipants(ctx, k)
}

// attributeProbes gives every breaker record whose probe names no agent
// (stored by a version-3 binary, when ids were global) the transfer agent
// of its probe inference, read from the version-3 layout. It looks every
// agent up before its first write, so a probe it cannot place leaves every
// record as it was. Without it the probe's outcome, which carries its
// agent, would not match the probe and hold the slot until the epoch ends.
func attributeProbes(ctx context.Context, k keeper.Keeper, old migrations.V3Layout) error {
	return k.Breaker().RewriteRecords(ctx, func(h types.ExecutorHealth) (types.ExecutorHealth, bool, error) {
		if !unattributed(h) {
			return h, false, nil
		}
		inf, err := old.Inferences.Get(ctx, h.ProbeInferenceId)
		if err != nil {
			return h, false, fmt.Errorf("probe inference %q of %s: version-3 inference %q: %w", h.ProbeInferenceId, h.Address, h.ProbeInferenceId, err)
		}
		h.ProbeAgent = inf.TransferAgent
		return h, true, nil
	})
}

// unattributed: a probe that names no agent. Only PROBE records with a
// probe in flight carry one, a few per epoch.
func unattributed(h types.ExecutorHealth) bool { return h.ProbeInferenceId != "" && h.ProbeAgent == "" }

// dropV3ExpiryQueue removes every version-3 expiry entry (check proved each
// names a STARTED inference at its expiration height), batch at a time: the
// new queue is rebuilt from those inferences. It runs before any version-4
// entry is queued, as both layouts share the prefix.
func dropV3ExpiryQueue(ctx sdk.Context, old migrations.V3Layout, batch int) error {
	var rng collections.Ranger[collections.Pair[int64, string]]
	for {
		entries := make([]collections.Pair[int64, string], 0, batch)
		if err := old.Expiry.Walk(ctx, rng, func(key collections.Pair[int64, string]) (bool, error) {
			entries = append(entries, key)
			return len(entries) == batch, nil
		}); err != nil {
			return fmt.Errorf("read version-3 expiry queue: %w", err)
		}
		for _, e := range entries {
			if err := old.Expiry.Remove(ctx, e); err != nil {
				return fmt.Errorf("drop version-3 expiry entry (%d, %q): %w", e.K1(), e.K2(), err)
			}
		}
		if len(entries) < batch {
			return nil
		}
		rng = new(collections.Range[collections.Pair[int64, string]]).StartExclusive(entries[len(entries)-1])
	}
}

// rekeyInferences moves the version-3 inferences to version-4 keys, batch
// at a time: STARTED ones with their expiry entry, closed ones with their
// prune entry, except those due by this height, which are only deleted.
// Version-4 keys sort below every version-3 one (v3Keys), so the walk
// never meets what it wrote. It returns how many it moved and pruned.
func rekeyInferences(ctx sdk.Context, k keeper.Keeper, old migrations.V3Layout, params types.Params, batch int) (moved, pruned int, err error) {
	last := ""
	for {
		infs := make([]types.Inference, 0, batch)
		if err := old.Inferences.Walk(ctx, v3KeysAfter(last), func(_ string, inf types.Inference) (bool, error) {
			infs = append(infs, inf)
			return len(infs) == batch, nil
		}); err != nil {
			return 0, 0, fmt.Errorf("read version-3 inferences: %w", err)
		}
		for _, inf := range infs {
			kept, err := rekeyInference(ctx, k, old, inf, params)
			if err != nil {
				return 0, 0, err
			}
			if kept {
				moved++
			} else {
				pruned++
			}
		}
		if len(infs) < batch {
			return moved, pruned, nil
		}
		last = infs[len(infs)-1].InferenceId
	}
}

// rekeyInference moves one version-3 inference; it reports false when the
// inference was due for pruning and so only deleted.
func rekeyInference(ctx sdk.Context, k keeper.Keeper, old migrations.V3Layout, inf types.Inference, params types.Params) (bool, error) {
	if err := old.Inferences.Remove(ctx, inf.InferenceId); err != nil {
		return false, fmt.Errorf("drop version-3 inference %q: %w", inf.InferenceId, err)
	}
	if inf.Status != types.INFERENCE_STATUS_STARTED && params.PruneHeight(inf.EndHeight) <= ctx.BlockHeight() {
		return false, nil
	}
	return true, k.Inferences().Import(ctx, inf, params)
}
