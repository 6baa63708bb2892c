package inferences

import (
	"context"
	"errors"
	"fmt"

	"cosmossdk.io/collections"

	sdk "github.com/cosmos/cosmos-sdk/types"

	"github.com/inferenced/inferenced/x/inference/types"
)

// Pruning: a closed (finished or expired) inference is deleted
// inference_retention_epochs x epoch_length blocks after the block that
// closed it. Its prune height is fixed when it closes, with the params of
// that block, so a governance change applies to inferences closed after it
// and never makes a backlog due at once: the entries due in a block are
// those closed in one earlier block, bounded by that block's gas.

// Prune deletes exactly the closed inferences due at or before height and
// their index entries, and remembers height as the last one pruned (only
// when something was due, so a block with nothing due writes nothing).
func (s Store) Prune(ctx context.Context, height int64) error {
	var due []HeightKey
	rng := collections.NewPrefixUntilTripleRange[int64, string, sdk.AccAddress](height)
	if err := s.prune.Walk(ctx, rng, func(key HeightKey) (bool, error) {
		due = append(due, key)
		return false, nil
	}); err != nil {
		return fmt.Errorf("walk prune index: %w", err)
	}
	if len(due) == 0 {
		return nil
	}
	for _, entry := range due {
		if err := s.pruneOne(ctx, entry); err != nil {
			return err
		}
	}
	if err := s.prunedThrough.Set(ctx, height); err != nil {
		return fmt.Errorf("store last pruned height: %w", err)
	}
	sdk.UnwrapSDKContext(ctx).Logger().Debug("pruned closed inferences", "module", types.ModuleName,
		"height", height, "count", len(due))
	return nil
}

func (s Store) pruneOne(ctx context.Context, entry HeightKey) error {
	key := keyOf(entry)
	inf, err := s.inferences.Get(ctx, key)
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
		if err := s.inferences.Remove(ctx, key); err != nil {
			return fmt.Errorf("prune inference %q: %w", key.K2(), err)
		}
	}
	if err := s.prune.Remove(ctx, entry); err != nil {
		return fmt.Errorf("drop prune index entry of %q: %w", key.K2(), err)
	}
	return nil
}

// missingReason says why an inference the store lacks is missing.
func (s Store) missingReason(ctx context.Context) (string, error) {
	last, err := s.prunedThrough.Get(ctx)
	if errors.Is(err, collections.ErrNotFound) {
		return "never started (no inference has been pruned yet)", nil
	}
	if err != nil {
		return "", fmt.Errorf("load last pruned height: %w", err)
	}
	params, err := s.reads.Params(ctx)
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
