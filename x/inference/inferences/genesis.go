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
// changed either param after it closed: a genesis carries the exported
// height, InitGenesis). One already due is pruned by the next block's end,
// as on the exported chain.
func (s Store) Import(ctx context.Context, inf types.Inference, params types.Params) error {
	return s.importAt(ctx, inf, params.PruneHeight(inf.EndHeight))
}

// importAt is Import with a closed inference's prune height given.
func (s Store) importAt(ctx context.Context, inf types.Inference, pruneHeight int64) error {
	key, err := s.KeyOf(inf)
	if err != nil {
		return err
	}
	if inf.Status == types.INFERENCE_STATUS_STARTED {
		if err := s.expiry.Set(ctx, NewHeightKey(inf.ExpirationHeight, key)); err != nil {
			return fmt.Errorf("queue expiry of %q: %w", inf.InferenceId, err)
		}
	} else if err := s.indexForPruning(ctx, key, inf, pruneHeight); err != nil {
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
// indexes, a closed inference's at its prune height from prune_heights
// (the exporting chain's, fixed when it closed) or, without one, from the
// genesis params (Import); and the last pruned height.
func (s Store) InitGenesis(ctx context.Context, gs types.GenesisState) error {
	at := make(map[string]int64, len(gs.PruneHeights))
	for _, p := range gs.PruneHeights {
		at[p.TransferAgent+"/"+p.InferenceId] = p.Height // validated: canonical spellings, one per closed inference
	}
	for _, inf := range gs.Inferences {
		height, ok := at[inf.TransferAgent+"/"+inf.InferenceId]
		if !ok {
			height = gs.Params.PruneHeight(inf.EndHeight)
		}
		if err := s.importAt(ctx, inf, height); err != nil {
			return err
		}
	}
	if gs.InferencesPrunedThrough > 0 {
		return s.MarkPruned(ctx, gs.InferencesPrunedThrough)
	}
	return nil
}

// ExportGenesis writes the retained inferences (pruned ones are gone from
// the store, so the export holds only those), the prune height of each
// closed one (in the index's order) and the last pruned height into gs.
func (s Store) ExportGenesis(ctx context.Context, gs *types.GenesisState) error {
	if err := s.inferences.Walk(ctx, nil, func(_ Key, inf types.Inference) (bool, error) {
		gs.Inferences = append(gs.Inferences, inf)
		return false, nil
	}); err != nil {
		return fmt.Errorf("walk inferences: %w", err)
	}
	if err := s.prune.Walk(ctx, nil, func(k HeightKey) (bool, error) {
		agent, err := s.ac.BytesToString(k.K3())
		if err != nil {
			return true, fmt.Errorf("encode transfer agent: %w", err)
		}
		gs.PruneHeights = append(gs.PruneHeights, types.PruneHeight{TransferAgent: agent, InferenceId: k.K2(), Height: k.K1()})
		return false, nil
	}); err != nil {
		return fmt.Errorf("walk prune index: %w", err)
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
