package inferences

import (
	"context"
	"fmt"

	"cosmossdk.io/collections"

	sdk "github.com/cosmos/cosmos-sdk/types"

	"github.com/inferenced/inferenced/x/inference/types"
)

// Expire closes, as EXPIRED at height, exactly the inferences whose
// expiration is due at or before height, in queue order (expiration
// height, id, agent), and calls expired with each after it is stored, for
// the keeper to judge the miss. A queue entry that names no STARTED
// inference (unreachable while Close removes it) is dropped.
func (s Store) Expire(ctx context.Context, height int64, expired func(types.Inference) error) error {
	var due []HeightKey
	rng := collections.NewPrefixUntilTripleRange[int64, string, sdk.AccAddress](height)
	if err := s.expiry.Walk(ctx, rng, func(key HeightKey) (bool, error) {
		due = append(due, key)
		return false, nil
	}); err != nil {
		return fmt.Errorf("walk expiry queue: %w", err)
	}
	if len(due) == 0 {
		return nil
	}
	params, err := s.reads.Params(ctx)
	if err != nil {
		return fmt.Errorf("load params: %w", err)
	}
	for _, entry := range due {
		if err := s.expire(ctx, entry, height, params, expired); err != nil {
			return fmt.Errorf("expire inference %q: %w", entry.K2(), err)
		}
	}
	return nil
}

func (s Store) expire(ctx context.Context, entry HeightKey, height int64, params types.Params, expired func(types.Inference) error) error {
	key := keyOf(entry)
	inf, err := s.inferences.Get(ctx, key)
	if err != nil {
		return fmt.Errorf("load inference: %w", err)
	}
	if inf.Status != types.INFERENCE_STATUS_STARTED {
		// Not reachable while Close removes the queue entry; drop it anyway.
		return s.expiry.Remove(ctx, entry)
	}
	inf.Status = types.INFERENCE_STATUS_EXPIRED
	inf.EndHeight = height
	if err := s.Close(ctx, key, inf, params); err != nil {
		return err
	}
	return expired(inf)
}
