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
	return new(collections.Range[string]).StartInclusive(v3KeyFloor)
}

// v3KeyFloor is the least version-3 inference key.
const v3KeyFloor = "-"

// v3KeysAfter is v3Keys after id: a batch resumes past the keys the last
// one deleted instead of walking their tombstones again (the upgrade
// block's cache still holds every deletion until it commits).
func v3KeysAfter(id string) collections.Ranger[string] {
	if id == "" {
		return v3Keys()
	}
	return new(collections.Range[string]).StartExclusive(id)
}

// migrationBatch is how many version-3 entries Migrate3to4 holds in
// memory at once. Version 3 never deleted an inference, so its history
// grows with the chain's age, not with any bound the chain sets.
const migrationBatch = 10_000

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
//     weight the minimum bond backs (migrateParticipantsTo4).
//
// It streams the version-3 history in batches of migrationBatch, so its
// memory does not grow with the chain's age.
//
// It returns the first error, wrapped. Nothing rolls a failed migration
// back: x/upgrade runs the handler in the upgrade block's own state, the
// error fails the pre-blocker and so the block, and the node stops at the
// upgrade height with nothing of that block committed. So that a refused
// store is left as version 3 wrote it in any context, the migration first
// checks everything it can refuse (checkV3, which writes nothing) and only
// then writes.
func (m Migrator) Migrate3to4(ctx sdk.Context) error {
	return m.migrate3to4InBatches(ctx, migrationBatch)
}

// migrate3to4InBatches is Migrate3to4 holding at most batch version-3
// entries in memory at once; the migrated store is the same for every
// batch of at least 1 (TestMigrate3to4AcrossBatchBoundaries).
func (m Migrator) migrate3to4InBatches(ctx sdk.Context, batch int) error {
	if batch < 1 {
		return fmt.Errorf("migration batch %d: must be at least 1", batch)
	}
	p, err := m.k.Params.Get(ctx)
	if err != nil {
		return fmt.Errorf("load params: %w", err)
	}
	old := m.v3()
	if err := m.checkV3(ctx, old); err != nil {
		return fmt.Errorf("version-3 store refused, nothing migrated: %w", err)
	}
	// The first write: it validates the params before storing them.
	if err := m.storeMigratedParams(ctx, p); err != nil {
		return err
	}
	params, err := m.k.Params.Get(ctx)
	if err != nil {
		return fmt.Errorf("load migrated params: %w", err)
	}
	if err := m.k.health.AttributeProbes(ctx, func(ctx context.Context, id string) (string, error) {
		inf, err := old.inferences.Get(ctx, id)
		if err != nil {
			return "", fmt.Errorf("version-3 inference %q: %w", id, err)
		}
		return inf.TransferAgent, nil
	}); err != nil {
		return fmt.Errorf("attribute probes: %w", err)
	}
	if err := m.dropV3ExpiryQueue(ctx, old, batch); err != nil {
		return err
	}
	moved, pruned, err := m.rekeyInferences(ctx, old, params, batch)
	if err != nil {
		return err
	}
	if pruned > 0 {
		if err := m.k.PrunedThrough.Set(ctx, ctx.BlockHeight()); err != nil {
			return fmt.Errorf("store last pruned height: %w", err)
		}
	}
	ctx.Logger().Debug("inferences migrated to version 4", "module", types.ModuleName, "rekeyed", moved, "pruned", pruned)
	return m.migrateParticipantsTo4(ctx)
}

// checkV3 refuses, before anything is written, every version-3 store the
// migration could not finish: a key that is not its inference's id, a
// value that does not decode, a key below every version-3 id (it would
// be left behind), a transfer agent that is no address (no version-4 key)
// or one so long its version-4 key would sort among the version-3 ids, an expiry entry that names no STARTED inference at its
// expiration height, a probe that names no inference, a participant whose
// address does not decode. It streams: it holds one entry at a time.
func (m Migrator) checkV3(ctx sdk.Context, old v3Layout) error {
	below := new(collections.Range[string]).EndExclusive(v3KeyFloor)
	if err := old.inferences.Walk(ctx, below, func(id string, _ types.Inference) (bool, error) {
		return true, fmt.Errorf("inference key %q sorts below every version-3 id", id)
	}); err != nil {
		return fmt.Errorf("read inference keys below %q: %w", v3KeyFloor, err)
	}
	if err := old.inferences.Walk(ctx, v3Keys(), func(id string, inf types.Inference) (bool, error) {
		if id != inf.InferenceId {
			return true, fmt.Errorf("version-3 inference key %q holds inference %q", id, inf.InferenceId)
		}
		// The id sits inside the version-4 expiry and prune keys, which
		// refuse some bytes: check it as every start did.
		if err := types.ValidateInferenceID(id); err != nil {
			return true, fmt.Errorf("version-3 inference %q: %w", id, err)
		}
		key, err := m.k.inferenceKey(inf)
		if err != nil {
			return true, err
		}
		if len(key.K1()) >= int(v3KeyFloor[0]) {
			return true, fmt.Errorf("inference %q transfer agent %q: a %d-byte address would key it among the version-3 ids",
				id, inf.TransferAgent, len(key.K1()))
		}
		return false, nil
	}); err != nil {
		return fmt.Errorf("read version-3 inferences: %w", err)
	}
	if err := old.expiry.Walk(ctx, nil, func(e collections.Pair[int64, string]) (bool, error) {
		inf, err := old.inferences.Get(ctx, e.K2())
		if err != nil {
			return true, fmt.Errorf("version-3 expiry entry (%d, %q): %w", e.K1(), e.K2(), err)
		}
		if inf.Status != types.INFERENCE_STATUS_STARTED || inf.ExpirationHeight != e.K1() {
			return true, fmt.Errorf("version-3 expiry entry (%d, %q) does not match its inference (%s, expiring at %d)",
				e.K1(), e.K2(), inf.Status, inf.ExpirationHeight)
		}
		return false, nil
	}); err != nil {
		return fmt.Errorf("read version-3 expiry queue: %w", err)
	}
	probes, err := m.k.health.UnattributedProbes(ctx)
	if err != nil {
		return fmt.Errorf("list probes to attribute: %w", err)
	}
	for _, id := range probes {
		if _, err := old.inferences.Get(ctx, id); err != nil {
			return fmt.Errorf("probe inference %q: %w", id, err)
		}
	}
	if err := m.k.Participants.Walk(ctx, nil, func(_ sdk.AccAddress, q types.Participant) (bool, error) {
		if _, err := m.k.addressCodec.StringToBytes(q.Address); err != nil {
			return true, fmt.Errorf("participant address %q: %w", q.Address, err)
		}
		return false, nil
	}); err != nil {
		return fmt.Errorf("read participants: %w", err)
	}
	return nil
}

// dropV3ExpiryQueue removes every version-3 expiry entry (checkV3 proved
// each names a STARTED inference at its expiration height), batch at a
// time: the new queue is rebuilt from those inferences. It runs before any
// version-4 entry is queued, as both layouts share the prefix.
func (m Migrator) dropV3ExpiryQueue(ctx sdk.Context, old v3Layout, batch int) error {
	var rng collections.Ranger[collections.Pair[int64, string]]
	for {
		entries := make([]collections.Pair[int64, string], 0, batch)
		if err := old.expiry.Walk(ctx, rng, func(key collections.Pair[int64, string]) (bool, error) {
			entries = append(entries, key)
			return len(entries) == batch, nil
		}); err != nil {
			return fmt.Errorf("read version-3 expiry queue: %w", err)
		}
		for _, e := range entries {
			if err := old.expiry.Remove(ctx, e); err != nil {
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
func (m Migrator) rekeyInferences(ctx sdk.Context, old v3Layout, params types.Params, batch int) (moved, pruned int, err error) {
	last := ""
	for {
		infs := make([]types.Inference, 0, batch)
		if err := old.inferences.Walk(ctx, v3KeysAfter(last), func(_ string, inf types.Inference) (bool, error) {
			infs = append(infs, inf)
			return len(infs) == batch, nil
		}); err != nil {
			return 0, 0, fmt.Errorf("read version-3 inferences: %w", err)
		}
		for _, inf := range infs {
			kept, err := m.rekeyInference(ctx, old, inf, params)
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
func (m Migrator) rekeyInference(ctx sdk.Context, old v3Layout, inf types.Inference, params types.Params) (bool, error) {
	if err := old.inferences.Remove(ctx, inf.InferenceId); err != nil {
		return false, fmt.Errorf("drop version-3 inference %q: %w", inf.InferenceId, err)
	}
	key, err := m.k.inferenceKey(inf)
	if err != nil {
		return false, err
	}
	switch {
	case inf.Status == types.INFERENCE_STATUS_STARTED:
		if err := m.k.ExpiryQueue.Set(ctx, NewHeightKey(inf.ExpirationHeight, key)); err != nil {
			return false, fmt.Errorf("queue expiry of %q: %w", inf.InferenceId, err)
		}
	case pruneHeight(inf.EndHeight, params) <= ctx.BlockHeight():
		return false, nil
	default:
		if err := m.k.indexForPruning(ctx, key, inf, params); err != nil {
			return false, err
		}
	}
	if err := m.k.Inferences.Set(ctx, key, inf); err != nil {
		return false, fmt.Errorf("store re-keyed inference %q: %w", inf.InferenceId, err)
	}
	return true, nil
}
