package health

import (
	"context"
	"fmt"

	"cosmossdk.io/collections"

	sdk "github.com/cosmos/cosmos-sdk/types"

	"github.com/inferenced/inferenced/x/inference/types"
)

// Census is everything the breaker stores, read back whole and in key
// order: what invariant checks and tests compare against the records.
type Census struct {
	Records []types.ExecutorHealth
	// RecordCount is the stored count (0 when absent).
	RecordCount uint64
	Cooldowns   []Cooldown
	Gates       []GateEntry
	Pending     []types.PendingSampleEntry
	// Queued is the queued-samples mark.
	Queued   bool
	Sequence uint64
}

// Cooldown is one cooldown index entry.
type Cooldown struct {
	Eligible int64
	Executor sdk.AccAddress
}

// GateEntry is one executor's gate; only its presence and Excluded are
// meaningful outside this package.
type GateEntry struct {
	Address  string
	Gate     uint64
	Excluded bool
}

// Record returns the stored record of address, if any.
func (c Census) Record(address string) (types.ExecutorHealth, bool) {
	for _, h := range c.Records {
		if h.Address == address {
			return h, true
		}
	}
	return types.ExecutorHealth{}, false
}

// Empty reports whether the breaker stores nothing an epoch boundary
// clears (records, cooldown entries, queued samples, gates).
func (c Census) Empty() bool {
	return len(c.Records) == 0 && len(c.Cooldowns) == 0 && len(c.Pending) == 0 && len(c.Gates) == 0
}

// Census reads the whole breaker state. It walks every collection: for
// tests and invariant checks, never for a block.
func (s Store) Census(ctx context.Context) (Census, error) {
	var c Census
	gs := types.GenesisState{}
	if err := s.ExportGenesis(ctx, &gs); err != nil {
		return Census{}, err
	}
	c.Records, c.Pending, c.Sequence = gs.ExecutorHealth, gs.PendingSamples, gs.SampleSequence
	var err error
	if c.RecordCount, err = s.heldCount(ctx); err != nil {
		return Census{}, err
	}
	if c.Queued, err = s.queued.Has(ctx); err != nil {
		return Census{}, fmt.Errorf("look up queued-samples mark: %w", err)
	}
	if err := s.cooldowns.Walk(ctx, nil, func(key collections.Pair[int64, sdk.AccAddress]) (bool, error) {
		c.Cooldowns = append(c.Cooldowns, Cooldown{Eligible: key.K1(), Executor: key.K2()})
		return false, nil
	}); err != nil {
		return Census{}, fmt.Errorf("walk cooldown index: %w", err)
	}
	if err := s.gates.Walk(ctx, nil, func(address string, g uint64) (bool, error) {
		c.Gates = append(c.Gates, GateEntry{Address: address, Gate: g, Excluded: gate(g).excluded()})
		return false, nil
	}); err != nil {
		return Census{}, fmt.Errorf("walk health gates: %w", err)
	}
	return c, nil
}
