package keeper

import (
	"context"
	"fmt"

	"cosmossdk.io/collections"

	"github.com/cosmos/cosmos-sdk/codec"
	sdk "github.com/cosmos/cosmos-sdk/types"

	"github.com/inferenced/inferenced/x/inference/types"
)

// v3Layout is the version-3 inference layout (ids global), read on the
// same prefixes with the old key codecs: inferences by id, the expiry
// queue by (expiration height, id).
type v3Layout struct {
	inferences collections.Map[string, types.Inference]
	expiry     collections.KeySet[collections.Pair[int64, string]]
}

// v3 declares the version-3 collections in a schema of their own (the
// keeper's schema holds the version-4 ones on the same prefixes).
func (m Migrator) v3() v3Layout {
	sb := collections.NewSchemaBuilder(m.k.storeService)
	return v3Layout{
		inferences: collections.NewMap(sb, types.InferencesPrefix, "inferences_v3", collections.StringKey, codec.CollValue[types.Inference](m.k.cdc)),
		expiry:     collections.NewKeySet(sb, types.ExpiryQueuePrefix, "expiry_queue_v3", collections.PairKeyCodec(collections.Int64Key, collections.StringKey)),
	}
}

// v3Keys ranges over exactly the version-3 inference keys: an id starts
// with one of [-.0-9:A-Z_a-z] (ValidateInferenceID), all at or above '-',
// while a version-4 key starts with its agent's address length (20 or 32),
// below it. So the walk never decodes a version-4 key as an id.
func v3Keys() collections.Ranger[string] {
	return new(collections.Range[string]).StartInclusive("-")
}

// fillRetention gives inference_retention_epochs, which a store written
// before version 4 lacks (zero, never valid), its default.
func fillRetention(p *types.Params) {
	if p.InferenceRetentionEpochs == 0 {
		p.InferenceRetentionEpochs = types.DefaultInferenceRetentionEpochs
	}
}

// Migrate3to4 brings a version-3 store (inference ids global) up to
// version 4 (ids unique per transfer agent, closed inferences pruned):
//   - inference_retention_epochs takes its default;
//   - every inference is re-keyed by (transfer agent, id), and the expiry
//     queue by (expiration height, id, agent);
//   - each closed inference is indexed for pruning at end_height +
//     retention, and one already due at this height is deleted here (the
//     version-3 chain kept every inference it ever closed, so the first
//     upgrade block deletes the backlog once; later blocks prune only what
//     closed retention blocks before them);
//   - breaker records get their probe's transfer agent (probe_agent);
//   - participants registered without a bond serve unbonded at weight 1
//     (migrateParticipantsTo4).
//
// It returns the first error, wrapped: the upgrade handler runs it in a
// cache context, so a failed migration writes nothing.
func (m Migrator) Migrate3to4(ctx sdk.Context) error {
	p, err := m.k.Params.Get(ctx)
	if err != nil {
		return fmt.Errorf("load params: %w", err)
	}
	if err := m.storeMigratedParams(ctx, p); err != nil {
		return err
	}
	params, err := m.k.Params.Get(ctx)
	if err != nil {
		return fmt.Errorf("load migrated params: %w", err)
	}
	old := m.v3()
	var all []types.Inference
	if err := old.inferences.Walk(ctx, v3Keys(), func(id string, inf types.Inference) (bool, error) {
		if id != inf.InferenceId {
			return true, fmt.Errorf("version-3 inference key %q holds inference %q", id, inf.InferenceId)
		}
		all = append(all, inf)
		return false, nil
	}); err != nil {
		return fmt.Errorf("read version-3 inferences: %w", err)
	}
	if err := m.dropV3ExpiryQueue(ctx, old); err != nil {
		return err
	}
	agents := make(map[string]string, len(all)) // probe id -> agent; looked up only
	for _, inf := range all {
		agents[inf.InferenceId] = inf.TransferAgent
		if err := old.inferences.Remove(ctx, inf.InferenceId); err != nil {
			return fmt.Errorf("drop version-3 inference %q: %w", inf.InferenceId, err)
		}
	}
	pruned, err := m.rekeyInferences(ctx, all, params)
	if err != nil {
		return err
	}
	if pruned > 0 {
		if err := m.k.PrunedThrough.Set(ctx, ctx.BlockHeight()); err != nil {
			return fmt.Errorf("store last pruned height: %w", err)
		}
	}
	if err := m.k.health.AttributeProbes(ctx, func(_ context.Context, id string) (string, error) {
		agent, ok := agents[id]
		if !ok {
			return "", fmt.Errorf("no version-3 inference %q", id)
		}
		return agent, nil
	}); err != nil {
		return fmt.Errorf("attribute probes: %w", err)
	}
	return m.migrateParticipantsTo4(ctx)
}

// dropV3ExpiryQueue removes every version-3 expiry entry, checking that
// each names a STARTED version-3 inference at its expiration height (the
// queue's invariant): the new queue is rebuilt from those inferences.
func (m Migrator) dropV3ExpiryQueue(ctx sdk.Context, old v3Layout) error {
	var entries []collections.Pair[int64, string]
	if err := old.expiry.Walk(ctx, nil, func(key collections.Pair[int64, string]) (bool, error) {
		entries = append(entries, key)
		return false, nil
	}); err != nil {
		return fmt.Errorf("read version-3 expiry queue: %w", err)
	}
	for _, e := range entries {
		inf, err := old.inferences.Get(ctx, e.K2())
		if err != nil {
			return fmt.Errorf("version-3 expiry entry (%d, %q): %w", e.K1(), e.K2(), err)
		}
		if inf.Status != types.INFERENCE_STATUS_STARTED || inf.ExpirationHeight != e.K1() {
			return fmt.Errorf("version-3 expiry entry (%d, %q) does not match its inference (%s, expiring at %d)",
				e.K1(), e.K2(), inf.Status, inf.ExpirationHeight)
		}
		if err := old.expiry.Remove(ctx, e); err != nil {
			return fmt.Errorf("drop version-3 expiry entry: %w", err)
		}
	}
	return nil
}

// rekeyInferences stores the version-3 inferences under version-4 keys:
// STARTED ones with their expiry entry, closed ones with their prune entry,
// except those due by this height, which are not stored at all. It returns
// how many it pruned.
func (m Migrator) rekeyInferences(ctx sdk.Context, all []types.Inference, params types.Params) (int, error) {
	pruned := 0
	for _, inf := range all {
		key, err := m.k.inferenceKey(inf)
		if err != nil {
			return 0, err
		}
		switch {
		case inf.Status == types.INFERENCE_STATUS_STARTED:
			if err := m.k.ExpiryQueue.Set(ctx, NewHeightKey(inf.ExpirationHeight, key)); err != nil {
				return 0, fmt.Errorf("queue expiry of %q: %w", inf.InferenceId, err)
			}
		case pruneHeight(inf.EndHeight, params) <= ctx.BlockHeight():
			pruned++
			continue
		default:
			if err := m.k.indexForPruning(ctx, key, inf, params); err != nil {
				return 0, err
			}
		}
		if err := m.k.Inferences.Set(ctx, key, inf); err != nil {
			return 0, fmt.Errorf("store re-keyed inference %q: %w", inf.InferenceId, err)
		}
	}
	return pruned, nil
}
