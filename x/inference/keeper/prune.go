package keeper

import (
	"context"
	"errors"
	"fmt"

	"cosmossdk.io/collections"
	errorsmod "cosmossdk.io/errors"

	sdk "github.com/cosmos/cosmos-sdk/types"

	"github.com/inferenced/inferenced/x/inference/types"
)

// Pruning: a closed (finished or expired) inference is deleted
// inference_retention_epochs x epoch_length blocks after the block that
// closed it. Its prune height is fixed when it closes, with the params of
// that block, so a governance change applies to inferences closed after it
// and never makes a backlog due at once: the entries due in a block are
// those closed in one earlier block, bounded by that block's gas.

// IndexForPruning schedules a closed inference's deletion.
func (k Keeper) IndexForPruning(ctx context.Context, key InferenceKey, inf types.Inference, params types.Params) error {
	if err := k.PruneIndex.Set(ctx, NewHeightKey(params.PruneHeight(inf.EndHeight), key)); err != nil {
		return fmt.Errorf("index inference %q for pruning: %w", inf.InferenceId, err)
	}
	return nil
}

// prune deletes exactly the closed inferences due at or before height and
// their index entries, and remembers height as the last one pruned (only
// when something was due, so a block with nothing due writes nothing).
func (k Keeper) prune(ctx context.Context, height int64) error {
	var due []HeightKey
	rng := collections.NewPrefixUntilTripleRange[int64, string, sdk.AccAddress](height)
	if err := k.PruneIndex.Walk(ctx, rng, func(key HeightKey) (bool, error) {
		due = append(due, key)
		return false, nil
	}); err != nil {
		return fmt.Errorf("walk prune index: %w", err)
	}
	if len(due) == 0 {
		return nil
	}
	for _, entry := range due {
		if err := k.pruneOne(ctx, entry); err != nil {
			return err
		}
	}
	if err := k.PrunedThrough.Set(ctx, height); err != nil {
		return fmt.Errorf("store last pruned height: %w", err)
	}
	sdk.UnwrapSDKContext(ctx).Logger().Debug("pruned closed inferences", "module", types.ModuleName,
		"height", height, "count", len(due))
	return nil
}

func (k Keeper) pruneOne(ctx context.Context, entry HeightKey) error {
	key := keyOf(entry)
	inf, err := k.Inferences.Get(ctx, key)
	switch {
	case errors.Is(err, collections.ErrNotFound):
		// Unreachable while every deletion of an inference goes through
		// its index entry; the entry alone is dropped.
	case err != nil:
		return fmt.Errorf("load inference %q to prune: %w", key.K2(), err)
	case inf.Status == types.INFERENCE_STATUS_STARTED:
		// Unreachable too (an id is reused only once its inference and
		// entry are gone): a stale entry must not delete a running
		// inference, nor halt the chain, so only the entry goes.
		sdk.UnwrapSDKContext(ctx).Logger().Error("prune index named a STARTED inference; entry dropped, inference kept",
			"module", types.ModuleName, "inference", key.K2())
	default:
		if err := k.Inferences.Remove(ctx, key); err != nil {
			return fmt.Errorf("prune inference %q: %w", key.K2(), err)
		}
	}
	if err := k.PruneIndex.Remove(ctx, entry); err != nil {
		return fmt.Errorf("drop prune index entry of %q: %w", key.K2(), err)
	}
	return nil
}

// Inference returns agent's inference id. A missing one is
// ErrInferenceNotFound with the reason: it never started, or (once
// anything was pruned) it may have closed and been pruned.
func (k Keeper) Inference(ctx context.Context, agent sdk.AccAddress, id string) (types.Inference, error) {
	inf, err := k.Inferences.Get(ctx, NewInferenceKey(agent, id))
	if err == nil {
		return inf, nil
	}
	if !errors.Is(err, collections.ErrNotFound) {
		return types.Inference{}, fmt.Errorf("load inference: %w", err)
	}
	reason, err := k.missingReason(ctx)
	if err != nil {
		return types.Inference{}, err
	}
	return types.Inference{}, errorsmod.Wrapf(types.ErrInferenceNotFound, "%q of transfer agent %s: %s", id, k.spell(agent), reason)
}

// missingReason says why an inference the store lacks is missing.
func (k Keeper) missingReason(ctx context.Context) (string, error) {
	last, err := k.PrunedThrough.Get(ctx)
	if errors.Is(err, collections.ErrNotFound) {
		return "never started (no inference has been pruned yet)", nil
	}
	if err != nil {
		return "", fmt.Errorf("load last pruned height: %w", err)
	}
	params, err := k.Params.Get(ctx)
	if err != nil {
		return "", fmt.Errorf("load params: %w", err)
	}
	// Inferences closed at or before last - retention were due by last,
	// with the retention of today's params (each prune height was fixed by
	// the params at its close, so after a change this is approximate).
	closedBefore := max(last-params.RetentionBlocks()+1, 0)
	return fmt.Sprintf("never started, or not retained: inferences closed before about height %d are pruned "+
		"(inference_retention_epochs = %d, fixed for each inference when it closed; last pruned at height %d)",
		closedBefore, params.InferenceRetentionEpochs, last), nil
}
