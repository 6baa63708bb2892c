package breakerstore

import (
	"context"
	"fmt"

	"cosmossdk.io/collections"

	sdk "github.com/cosmos/cosmos-sdk/types"

	"github.com/inferenced/inferenced/x/inference/types"
)

// QueueOutcome holds an inference outcome (a finish, or a miss when it
// expired) for the next block's step. A success of an executor the breaker
// holds nothing on, and has nothing pending for, would change nothing and
// is not written: a network where everyone is healthy writes no breaker
// state.
func (s Store) QueueOutcome(ctx context.Context, inf types.Inference, miss bool) error {
	executor, err := s.ac.StringToBytes(inf.Executor)
	if err != nil {
		return fmt.Errorf("inference executor %q: %w", inf.Executor, err)
	}
	addr := sdk.AccAddress(executor)
	stored, err := s.records.Has(ctx, addr)
	if err != nil {
		return fmt.Errorf("look up breaker record: %w", err)
	}
	sample := types.PendingSample{
		InferenceId: inf.InferenceId, Miss: miss, StartHeight: inf.StartHeight,
		Agent: inf.TransferAgent, EndHeight: inf.EndHeight,
	}
	if !stored {
		pending, err := s.hasPending(ctx, addr)
		if err != nil {
			return err
		}
		if !pending {
			if !miss {
				return nil
			}
			// The first miss starts a record; its window begins with the
			// successes this epoch already counted, up to a full window.
			if sample.PriorOks, err = s.priorSuccesses(ctx, addr); err != nil {
				return err
			}
		}
	}
	seq, err := s.sequence.Next(ctx)
	if err != nil {
		return fmt.Errorf("next sample sequence: %w", err)
	}
	return s.enqueue(ctx, addr, seq, sample)
}

// enqueue stores one pending sample and the mark that something is queued
// (one read when the mark is already there).
func (s Store) enqueue(ctx context.Context, addr sdk.AccAddress, seq uint64, sample types.PendingSample) error {
	if err := s.pending.Set(ctx, collections.Join(addr, seq), sample); err != nil {
		return fmt.Errorf("queue sample: %w", err)
	}
	queued, err := s.queued.Has(ctx)
	if err != nil {
		return fmt.Errorf("look up queued-samples mark: %w", err)
	}
	if queued {
		return nil
	}
	if err := s.queued.Set(ctx, true); err != nil {
		return fmt.Errorf("mark samples queued: %w", err)
	}
	return nil
}

func (s Store) hasPending(ctx context.Context, addr sdk.AccAddress) (bool, error) {
	it, err := s.pending.Iterate(ctx, collections.NewPrefixedPairRange[sdk.AccAddress, uint64](addr))
	if err != nil {
		return false, fmt.Errorf("iterate pending samples: %w", err)
	}
	valid := it.Valid()
	if err := it.Close(); err != nil {
		return false, fmt.Errorf("close pending-samples iterator: %w", err)
	}
	return valid, nil
}

type queuedSample struct {
	key    collections.Pair[sdk.AccAddress, uint64]
	sample types.PendingSample
}

// dequeueAll takes every queued sample out of the store, in key order.
func (s Store) dequeueAll(ctx context.Context) ([]queuedSample, error) {
	marked, err := s.queued.Has(ctx)
	if err != nil {
		return nil, fmt.Errorf("look up queued-samples mark: %w", err)
	}
	if !marked {
		return nil, nil
	}
	if err := s.queued.Remove(ctx); err != nil {
		return nil, fmt.Errorf("drop queued-samples mark: %w", err)
	}
	var all []queuedSample
	if err := s.pending.Walk(ctx, nil, func(key collections.Pair[sdk.AccAddress, uint64], v types.PendingSample) (bool, error) {
		all = append(all, queuedSample{key, v})
		return false, nil
	}); err != nil {
		return nil, fmt.Errorf("walk pending samples: %w", err)
	}
	for _, q := range all {
		if err := s.pending.Remove(ctx, q.key); err != nil {
			return nil, fmt.Errorf("dequeue sample: %w", err)
		}
	}
	return all, nil
}

// queuedExecutors are the executors with an outcome queued for the next
// step, in address order, each once. A block with nothing queued opens no
// iterator.
func (s Store) queuedExecutors(ctx context.Context) ([]sdk.AccAddress, error) {
	marked, err := s.queued.Has(ctx)
	if err != nil || !marked {
		return nil, err
	}
	// Keys only: the samples themselves are not decoded.
	it, err := s.pending.IterateRaw(ctx, nil, nil, collections.OrderAscending)
	if err != nil {
		return nil, fmt.Errorf("iterate pending samples: %w", err)
	}
	var out []sdk.AccAddress
	for ; it.Valid(); it.Next() {
		key, err := it.Key()
		if err != nil {
			_ = it.Close() // the key's error is the one to report
			return nil, fmt.Errorf("pending sample key: %w", err)
		}
		if n := len(out); n == 0 || !out[n-1].Equals(key.K1()) {
			out = append(out, key.K1())
		}
	}
	if err := it.Close(); err != nil {
		return nil, fmt.Errorf("close pending-samples iterator: %w", err)
	}
	return out, nil
}
