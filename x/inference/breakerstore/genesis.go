package breakerstore

import (
	"context"
	"fmt"

	"cosmossdk.io/collections"

	sdk "github.com/cosmos/cosmos-sdk/types"

	"github.com/inferenced/inferenced/x/inference/types"
)

// Clear drops all breaker state; the epoch boundary calls it.
func (s Store) Clear(ctx context.Context) error {
	if err := s.records.Clear(ctx, nil); err != nil {
		return fmt.Errorf("clear breaker records: %w", err)
	}
	if err := s.recordCount.Remove(ctx); err != nil {
		return fmt.Errorf("clear breaker record count: %w", err)
	}
	if err := s.cooldowns.Clear(ctx, nil); err != nil {
		return fmt.Errorf("clear cooldown index: %w", err)
	}
	if err := s.pending.Clear(ctx, nil); err != nil {
		return fmt.Errorf("clear pending samples: %w", err)
	}
	if err := s.queued.Remove(ctx); err != nil {
		return fmt.Errorf("clear queued-samples mark: %w", err)
	}
	if err := s.gates.Clear(ctx, nil); err != nil {
		return fmt.Errorf("clear health gates: %w", err)
	}
	if err := s.streaks.Remove(ctx); err != nil {
		return fmt.Errorf("clear breaker streaks: %w", err)
	}
	if err := s.bits.Remove(ctx); err != nil {
		return fmt.Errorf("clear breaker held bits: %w", err)
	}
	resetGauges()
	return nil
}

// Restore stores an imported record as a change from no record, so its
// cooldown entry, gate, count and held bits come from the same code as
// on chain (the import has no streaks item: the record's fields are its
// effective ones). It is
// stored under the canonical spelling of its address (selection matches
// gates by the members' addresses). Genesis validation has ruled out a
// second record for the same executor.
func (s Store) Restore(ctx context.Context, h types.ExecutorHealth) error {
	addr, err := s.ac.StringToBytes(h.Address)
	if err != nil {
		return fmt.Errorf("breaker record address: %w", err)
	}
	after := entryOf(addr, h)
	after.stored = false
	return s.save(ctx, entry{addr: addr}, after)
}

// InitGenesis loads the breaker's part of a validated genesis.
func (s Store) InitGenesis(ctx context.Context, gs types.GenesisState) error {
	for _, h := range gs.ExecutorHealth {
		if err := s.Restore(ctx, h); err != nil {
			return err
		}
	}
	for _, p := range gs.PendingSamples {
		addr, err := s.ac.StringToBytes(p.Executor)
		if err != nil {
			return fmt.Errorf("pending sample executor: %w", err)
		}
		if err := s.enqueue(ctx, addr, p.Sequence, p.Sample); err != nil {
			return err
		}
	}
	if err := s.sequence.Set(ctx, gs.SampleSequence); err != nil {
		return fmt.Errorf("store sample sequence: %w", err)
	}
	return nil
}

// ExportGenesis writes the breaker's records (as they read under the
// streaks item: an import starts without one), queued samples and
// sequence into gs.
func (s Store) ExportGenesis(ctx context.Context, gs *types.GenesisState) error {
	if err := s.walkEffective(ctx, func(_ sdk.AccAddress, h types.ExecutorHealth) error {
		gs.ExecutorHealth = append(gs.ExecutorHealth, h)
		return nil
	}); err != nil {
		return err
	}
	if err := s.pending.Walk(ctx, nil, func(key collections.Pair[sdk.AccAddress, uint64], p types.PendingSample) (bool, error) {
		executor, err := s.ac.BytesToString(key.K1())
		if err != nil {
			return true, fmt.Errorf("encode executor: %w", err)
		}
		gs.PendingSamples = append(gs.PendingSamples, types.PendingSampleEntry{Executor: executor, Sequence: key.K2(), Sample: p})
		return false, nil
	}); err != nil {
		return fmt.Errorf("walk pending samples: %w", err)
	}
	seq, err := s.sequence.Peek(ctx)
	if err != nil {
		return fmt.Errorf("load sample sequence: %w", err)
	}
	gs.SampleSequence = seq
	return nil
}
