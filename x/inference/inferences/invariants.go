package inferences

import (
	"context"
	"fmt"

	"github.com/inferenced/inferenced/x/inference/types"
)

// Invariants checks that the indexes are in step with the inferences: the
// expiry queue holds exactly the STARTED inferences at their expiration
// height, and the prune index exactly one entry per closed inference (its
// height was fixed by the params of the block that closed it). It walks
// every collection: for invariant checks (tests, simulations, an
// operator's audit), never for a block.
func (s Store) Invariants(ctx context.Context) error {
	want := map[string]bool{} // expiry entries the inferences imply
	closed := map[string]bool{}
	if err := s.inferences.Walk(ctx, nil, func(k Key, inf types.Inference) (bool, error) {
		if inf.Status == types.INFERENCE_STATUS_STARTED {
			want[entryString(NewHeightKey(inf.ExpirationHeight, k))] = true
		} else {
			closed[keyString(k)] = true
		}
		return false, nil
	}); err != nil {
		return fmt.Errorf("walk inferences: %w", err)
	}
	queued := 0
	if err := s.expiry.Walk(ctx, nil, func(h HeightKey) (bool, error) {
		queued++
		if !want[entryString(h)] {
			return true, fmt.Errorf("expiry entry %s names no STARTED inference expiring then", entryString(h))
		}
		return false, nil
	}); err != nil {
		return err
	}
	if queued != len(want) {
		return fmt.Errorf("%d expiry entries for %d STARTED inferences", queued, len(want))
	}
	indexed := map[string]bool{}
	if err := s.prune.Walk(ctx, nil, func(h HeightKey) (bool, error) {
		k := keyString(keyOf(h))
		if !closed[k] || indexed[k] {
			return true, fmt.Errorf("prune entry %s names no closed inference, or one indexed twice", entryString(h))
		}
		indexed[k] = true
		return false, nil
	}); err != nil {
		return err
	}
	if len(indexed) != len(closed) {
		return fmt.Errorf("%d prune entries for %d closed inferences", len(indexed), len(closed))
	}
	return nil
}

func keyString(k Key) string { return fmt.Sprintf("%X/%s", []byte(k.K1()), k.K2()) }

func entryString(h HeightKey) string { return fmt.Sprintf("%d/%s", h.K1(), keyString(keyOf(h))) }
