package keeper

import (
	"context"
	"errors"
	"fmt"

	"cosmossdk.io/collections"

	"github.com/inferenced/inferenced/x/inference/types"
)

// importInferences stores a validated genesis's inferences and rebuilds
// their indexes: the expiry queue from the STARTED ones, the prune index
// from the closed ones. A closed inference's prune height is derived from
// the imported params (end_height + inference_retention_epochs x
// epoch_length), the rule the chain applies at close: it equals the
// exported chain's own unless governance changed either param after the
// inference closed. One already due is pruned by the first block's
// EndBlock, as on the exported chain.
func (k Keeper) importInferences(ctx context.Context, gs types.GenesisState) error {
	for _, inf := range gs.Inferences {
		key, err := k.InferenceKeyOf(inf)
		if err != nil {
			return err
		}
		if err := k.Inferences.Set(ctx, key, inf); err != nil {
			return fmt.Errorf("store inference: %w", err)
		}
		if inf.Status == types.INFERENCE_STATUS_STARTED {
			if err := k.ExpiryQueue.Set(ctx, NewHeightKey(inf.ExpirationHeight, key)); err != nil {
				return fmt.Errorf("queue expiry: %w", err)
			}
			continue
		}
		if err := k.IndexForPruning(ctx, key, inf, gs.Params); err != nil {
			return err
		}
	}
	if gs.InferencesPrunedThrough > 0 {
		if err := k.PrunedThrough.Set(ctx, gs.InferencesPrunedThrough); err != nil {
			return fmt.Errorf("store last pruned height: %w", err)
		}
	}
	return nil
}

// exportInferences writes the retained inferences (pruned ones are gone
// from the store, so the export holds only those) and the last pruned
// height into gs.
func (k Keeper) exportInferences(ctx context.Context, gs *types.GenesisState) error {
	if err := k.Inferences.Walk(ctx, nil, func(_ InferenceKey, inf types.Inference) (bool, error) {
		gs.Inferences = append(gs.Inferences, inf)
		return false, nil
	}); err != nil {
		return fmt.Errorf("walk inferences: %w", err)
	}
	last, err := k.PrunedThrough.Get(ctx)
	switch {
	case errors.Is(err, collections.ErrNotFound):
	case err != nil:
		return fmt.Errorf("load last pruned height: %w", err)
	default:
		gs.InferencesPrunedThrough = last
	}
	return nil
}
