package breakerstore

import (
	"context"
	"fmt"

	"cosmossdk.io/collections"

	sdk "github.com/cosmos/cosmos-sdk/types"

	"github.com/inferenced/inferenced/x/inference/breaker"
	"github.com/inferenced/inferenced/x/inference/types"
)

// census is everything the breaker stores, read back whole and in key
// order.
type census struct {
	gs          types.GenesisState // records, pending samples, sequence
	recordCount uint64             // the stored count (0 when absent)
	queued      bool               // the queued-samples mark
	cooldowns   []collections.Pair[int64, sdk.AccAddress]
	gates       []gateEntry
}

type gateEntry struct {
	address string
	gate    breaker.Gate
}

// read walks every collection of the store.
func (s Store) read(ctx context.Context) (census, error) {
	var c census
	if err := s.ExportGenesis(ctx, &c.gs); err != nil {
		return census{}, err
	}
	var err error
	if c.recordCount, err = s.heldCount(ctx); err != nil {
		return census{}, err
	}
	if c.queued, err = s.queued.Has(ctx); err != nil {
		return census{}, fmt.Errorf("look up queued-samples mark: %w", err)
	}
	if err := s.cooldowns.Walk(ctx, nil, func(key collections.Pair[int64, sdk.AccAddress]) (bool, error) {
		c.cooldowns = append(c.cooldowns, key)
		return false, nil
	}); err != nil {
		return census{}, fmt.Errorf("walk cooldown index: %w", err)
	}
	if err := s.gates.Walk(ctx, nil, func(address string, g uint64) (bool, error) {
		c.gates = append(c.gates, gateEntry{address, breaker.Gate(g)})
		return false, nil
	}); err != nil {
		return census{}, fmt.Errorf("walk health gates: %w", err)
	}
	return c, nil
}

// Invariants checks that everything save derives from the records is in
// step with them: the record count equals the records, the queued-samples
// mark is set exactly while samples are queued, the cooldown index holds
// exactly the EXCLUDED records at their eligible height, the gates are
// exactly those of the EXCLUDED and PROBE records, and the held bits and
// the streaks item are in step with the records (streakInvariants). It
// walks every
// collection: for invariant checks (tests, simulations, an operator's
// audit), never for a block.
func (s Store) Invariants(ctx context.Context) error {
	c, err := s.read(ctx)
	if err != nil {
		return err
	}
	if err := s.records.Walk(ctx, nil, func(key sdk.AccAddress, h types.ExecutorHealth) (bool, error) {
		addr, err := s.ac.StringToBytes(h.Address)
		if err != nil || !key.Equals(sdk.AccAddress(addr)) {
			return true, fmt.Errorf("breaker record stored under %X names %q", []byte(key), h.Address)
		}
		return false, nil
	}); err != nil {
		return err
	}
	if n := uint64(len(c.gs.ExecutorHealth)); c.recordCount != n {
		return fmt.Errorf("breaker record count %d, but %d records", c.recordCount, n)
	}
	if c.queued != (len(c.gs.PendingSamples) > 0) {
		return fmt.Errorf("queued-samples mark %v with %d samples queued", c.queued, len(c.gs.PendingSamples))
	}
	var cooldowns []collections.Pair[int64, sdk.AccAddress]
	var gates []gateEntry
	for _, h := range c.gs.ExecutorHealth {
		addr, err := s.ac.StringToBytes(h.Address)
		if err != nil {
			return fmt.Errorf("breaker record address %q: %w", h.Address, err)
		}
		e := entryOf(addr, h)
		if e.plain() {
			return fmt.Errorf("breaker record of %s holds nothing a fresh executor would not: save never stores one", h.Address)
		}
		if g, ok := breaker.GateOf(e.rec); ok {
			gates = append(gates, gateEntry{h.Address, g})
		}
		if h.State == types.HEALTH_STATE_EXCLUDED {
			cooldowns = append(cooldowns, collections.Join(e.rec.EligibleAt(), sdk.AccAddress(addr)))
		}
	}
	if err := sameIndex("cooldown", cooldowns, c.cooldowns, func(k collections.Pair[int64, sdk.AccAddress]) string {
		return fmt.Sprintf("%d/%X", k.K1(), []byte(k.K2()))
	}); err != nil {
		return err
	}
	if err := sameIndex("gate", gates, c.gates, func(g gateEntry) string { return fmt.Sprintf("%s/%d", g.address, g.gate) }); err != nil {
		return err
	}
	return s.streakInvariants(ctx)
}

// sameIndex compares the entries the records imply with the stored ones
// as sets (the records' order is not the index's); the map is only looked
// up.
func sameIndex[T any](what string, want, got []T, key func(T) string) error {
	if len(want) != len(got) {
		return fmt.Errorf("%d %s entries stored, the records imply %d", len(got), what, len(want))
	}
	stored := make(map[string]bool, len(got))
	for _, g := range got {
		stored[key(g)] = true
	}
	for _, w := range want {
		if !stored[key(w)] {
			return fmt.Errorf("%s entry %s implied by the records is not stored", what, key(w))
		}
	}
	return nil
}
