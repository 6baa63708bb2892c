package inferences

import (
	"context"
	"errors"
	"fmt"

	"cosmossdk.io/collections"

	"github.com/inferenced/inferenced/x/inference/types"
)

// Import stores an inference carried over from elsewhere (a genesis, an
// older layout) with its index entry: a STARTED one queued for expiry, a
// closed one indexed for pruning with params, the rule the chain applies at
// close (its prune height equals the exported chain's own unless governance
// changed either param after it closed). One already due is pruned by the
// next block's end, as on the exported chain.
func (s Store) Import(ctx context.Context, inf types.Inference, params types.Params) error {
	key, err := s.KeyOf(inf)
	if err != nil {
		return err
	}
	if inf.Status == types.INFERENCE_STATUS_STARTED {
		if err := s.expiry.Set(ctx, NewHeightKey(inf.ExpirationHeight, key)); err != nil {
			return fmt.Errorf("queue expiry of %q: %w", inf.InferenceId, err)
		}
	} else if err := s.indexForPruning(ctx, key, inf, params); err != nil {
		return err
	}
	if err := s.inferences.Set(ctx, key, inf); err != nil {
		return fmt.Errorf("store inference %q: %w", inf.InferenceId, err)
	}
	return nil
}

// MarkPruned records height as the last height that pruned anything (a
// migration that deleted a backlog says so).
func (s Store) MarkPruned(ctx context.Context, height int64) error {
	if err := s.prunedThrough.Set(ctx, height); err != nil {
		return fmt.Errorf("store last pruned height: %w", err)
	}
	return nil
}

// InitGenesis stores a validated genesis's inferences and rebuilds their
// indexes (Import), and the last pruned height.
func (s Store) InitGenesis(ctx context.Context, gs types.GenesisState) error {
	for _, inf := range gs.Inferences {
		if err := s.Import(ctx, inf, gs.Params); err != nil {
			return err
		}
	}
	if gs.InferencesPrunedThrough > 0 {
		return s.MarkPruned(ctx, gs.InferencesPrunedThrough)
	}
	return nil
}

// ExportGenesis writes the retained inferences (pruned ones are gone from
// the store, so the export holds only those) and the last pruned height
// into gs.
func (s Store) ExportGenesis(ctx context.Context, gs *types.GenesisState) error {
	if err := s.inferences.Walk(ctx, nil, func(_ Key, inf types.Inference) (bool, error) {
		gs.Inferences = append(gs.Inferences, inf)
		return false, nil
	}); err != nil {
		return fmt.Errorf("walk inferences: %w", err)
	}
	last, err := s.prunedThrough.Get(ctx)
	switch {
	case errors.Is(err, collections.ErrNotFound):
	case err != nil:
		return fmt.Errorf("load last pruned height: %w", err)
	default:
		gs.InferencesPrunedThrough = last
	}
	return nil
}
