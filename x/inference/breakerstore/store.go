// Package breakerstore is the circuit breaker's store: it owns every collection
// the breaker keeps (records, the cooldown index, the gates, the record
// count and the traffic-sample queue) and is their only writer. The pure
// state machine is x/inference/breaker and what one outcome does is
// x/inference/judge; this package decides which samples reach a record,
// keeps the records and their indexes, and returns the miss verdicts it
// reached for the keeper to apply (the SPRT, agents' standing). What it
// reads of the rest of the module comes through Reads, which never writes.
package breakerstore

import (
	"context"
	"errors"
	"fmt"

	"cosmossdk.io/collections"
	collcodec "cosmossdk.io/collections/codec"
	"cosmossdk.io/core/address"

	"github.com/cosmos/cosmos-sdk/codec"
	sdk "github.com/cosmos/cosmos-sdk/types"

	"github.com/inferenced/inferenced/x/inference/breaker"
	"github.com/inferenced/inferenced/x/inference/types"
)

// Reads is what the breaker reads of the rest of x/inference: the current
// epoch group and the executors' successes this epoch. Its methods only
// read.
type Reads interface {
	// MemberIndex is addr's index in the current epoch group, if it is a
	// member.
	MemberIndex(ctx context.Context, addr sdk.AccAddress) (uint32, bool, error)
	// MemberAt is the member at index of the current epoch group.
	MemberAt(ctx context.Context, index uint32) (types.EpochMember, error)
	// ModelWeight is a model's total epoch weight (0 if nobody serves it).
	ModelWeight(ctx context.Context, model string) (uint64, error)
	// EpochIndex is the current epoch's index (0 before the first epoch): the
	// streaks item is about this epoch's group.
	EpochIndex(ctx context.Context) (uint64, error)
	// EpochSuccesses is how many inferences the executor finished this
	// epoch (0 for one that is no longer a participant): the history of an
	// executor the breaker holds nothing on.
	EpochSuccesses(ctx context.Context, addr sdk.AccAddress) (uint64, error)
}

// Store is the breaker's state. Its collections are unexported: every
// change goes through this package, which keeps the derived indexes in
// step with the records in one place (save).
type Store struct {
	ac    address.Codec
	reads Reads

	// records holds the breaker record of every executor that is not
	// plainly healthy this epoch; the others have none.
	records collections.Map[sdk.AccAddress, types.ExecutorHealth]
	// recordCount is the size of records (absent when 0), so that a block
	// in which the breaker holds no one learns it from one read instead of
	// opening an iterator.
	recordCount collections.Item[uint64]
	// cooldowns holds (eligible height, executor) of exactly the EXCLUDED
	// records, so each block promotes exactly the due ones.
	cooldowns collections.KeySet[collections.Pair[int64, sdk.AccAddress]]
	// gates holds, by bech32 address, the gate of exactly the EXCLUDED and
	// PROBE records (breaker.Gate): selection reads a few small integers
	// instead of whole records.
	gates collections.Map[string, uint64]
	// pending holds the traffic outcomes of the current block by
	// (executor, sequence); the next block's step applies and removes them.
	pending  collections.Map[collections.Pair[sdk.AccAddress, uint64], types.PendingSample]
	sequence collections.Sequence
	// queued is present exactly while pending holds anything, so a block
	// with nothing queued opens no iterator.
	queued collections.Item[bool]
	// streaks carries the attested/service miss and the service ok
	// streaks of the quiet executors instead of their records (streaks.go:
	// a stored record reads through it).
	streaks collections.Item[streaks]
	// bits are the members held and quiet, by group index (heldbits.go).
	bits collections.Item[heldBits]
}

// NewStore declares the breaker's collections in the module's schema.
func NewStore(sb *collections.SchemaBuilder, cdc codec.BinaryCodec, ac address.Codec, reads Reads) Store {
	return Store{
		ac:          ac,
		reads:       reads,
		records:     collections.NewMap(sb, types.ExecutorHealthPrefix, "executor_health", sdk.AccAddressKey, codec.CollValue[types.ExecutorHealth](cdc)),
		recordCount: collections.NewItem(sb, types.HealthRecordCountKey, "health_record_count", collections.Uint64Value),
		cooldowns:   collections.NewKeySet(sb, types.CooldownIndexPrefix, "cooldown_index", collections.PairKeyCodec(collections.Int64Key, sdk.AccAddressKey)),
		gates:       collections.NewMap(sb, types.HealthGatePrefix, "health_gate", collections.StringKey, collections.Uint64Value),
		pending:     collections.NewMap(sb, types.PendingSamplesPrefix, "pending_samples", collections.PairKeyCodec(sdk.AccAddressKey, collections.Uint64Key), codec.CollValue[types.PendingSample](cdc)),
		sequence:    collections.NewSequence(sb, types.SampleSequenceKey, "sample_sequence"),
		queued:      collections.NewItem(sb, types.SamplesQueuedKey, "samples_queued", collections.BoolValue),
		streaks:     collections.NewItem(sb, types.StreaksKey, "breaker_streaks", collcodec.ValueCodec[streaks](streaksCodec{})),
		bits:        collections.NewItem(sb, types.HeldBitsKey, "breaker_held_bits", collcodec.ValueCodec[heldBits](heldBitsCodec{})),
	}
}

// load returns an executor's entry, its record as it reads under the
// streaks item; an executor without a record is HEALTHY with no recent
// misses.
func (s Store) load(ctx context.Context, addr sdk.AccAddress) (entry, error) {
	h, err := s.records.Get(ctx, addr)
	if errors.Is(err, collections.ErrNotFound) {
		return entry{addr: addr}, nil
	}
	if err != nil {
		return entry{}, fmt.Errorf("load breaker record of %s: %w", addr, err)
	}
	k, _, err := s.loadStreaks(ctx)
	if err != nil {
		return entry{}, err
	}
	if err := s.effectiveOf(ctx, k, addr, &h); err != nil {
		return entry{}, err
	}
	return entryOf(addr, h), nil
}

// loadStored is load without the streaks item: for readers that use
// neither field it carries (Status).
func (s Store) loadStored(ctx context.Context, addr sdk.AccAddress) (entry, error) {
	h, err := s.records.Get(ctx, addr)
	if errors.Is(err, collections.ErrNotFound) {
		return entry{addr: addr}, nil
	}
	if err != nil {
		return entry{}, fmt.Errorf("load breaker record of %s: %w", addr, err)
	}
	return entryOf(addr, h), nil
}

// save is the one writer of records and everything derived from them: it
// writes an entry that changed from before, keeps the cooldown index, the
// gate and the record count in step, and deletes a record that has become
// plain (a fresh executor needs none), and the held bits and the streaks
// item with it (syncBits).
func (s Store) save(ctx context.Context, before, after entry) error {
	if !after.rec.ProbeInFlight {
		after.probe = probeRef{}
	}
	if before.stored && before.same(after) {
		return nil
	}
	if before.stored && before.rec.State == breaker.Excluded {
		if err := s.cooldowns.Remove(ctx, collections.Join(before.rec.EligibleAt(), before.addr)); err != nil {
			return fmt.Errorf("unindex cooldown of %s: %w", before.addr, err)
		}
	}
	if after.plain() && !before.stored {
		return nil
	}
	h, err := after.proto(s.ac)
	if err != nil {
		return err
	}
	if err := s.syncGate(ctx, h.Address, before, after); err != nil {
		return err
	}
	if after.plain() {
		if err := s.records.Remove(ctx, after.addr); err != nil {
			return fmt.Errorf("drop breaker record of %s: %w", after.addr, err)
		}
		if err := s.countRecords(ctx, -1); err != nil {
			return err
		}
		return s.syncBits(ctx, before, after)
	}
	if after.rec.State == breaker.Excluded {
		if err := s.cooldowns.Set(ctx, collections.Join(after.rec.EligibleAt(), after.addr)); err != nil {
			return fmt.Errorf("index cooldown of %s: %w", after.addr, err)
		}
	}
	if err := s.records.Set(ctx, after.addr, h); err != nil {
		return fmt.Errorf("store breaker record of %s: %w", after.addr, err)
	}
	if !before.stored {
		if err := s.countRecords(ctx, +1); err != nil {
			return err
		}
	}
	return s.syncBits(ctx, before, after)
}

// syncGate keeps the gate of address in step with a record change.
func (s Store) syncGate(ctx context.Context, address string, before, after entry) error {
	was, hadGate := breaker.GateOf(before.rec)
	hadGate = hadGate && before.stored
	now, hasGate := breaker.GateOf(after.rec)
	switch {
	case hasGate && (!hadGate || now != was):
		if err := s.gates.Set(ctx, address, uint64(now)); err != nil {
			return fmt.Errorf("store health gate: %w", err)
		}
	case !hasGate && hadGate:
		if err := s.gates.Remove(ctx, address); err != nil {
			return fmt.Errorf("drop health gate: %w", err)
		}
	}
	return nil
}

// heldCount is the number of breaker records, read without an iterator.
func (s Store) heldCount(ctx context.Context) (uint64, error) {
	n, _, err := itemOrZero(ctx, s.recordCount, "record count")
	return n, err
}

// countRecords keeps recordCount equal to the number of records after one
// is added (+1) or removed (-1).
func (s Store) countRecords(ctx context.Context, delta int) error {
	n, err := s.heldCount(ctx)
	if err != nil {
		return err
	}
	switch {
	case delta < 0 && n == 0:
		return errors.New("breaker record count would go below zero")
	case delta < 0:
		n--
	default:
		n++
	}
	return setOrDrop(ctx, s.recordCount, n, n > 0, "record count")
}

// priorSuccesses is the history a new record of addr starts with: its
// successes this epoch, up to a full window.
func (s Store) priorSuccesses(ctx context.Context, addr sdk.AccAddress) (uint32, error) {
	n, err := s.reads.EpochSuccesses(ctx, addr)
	if err != nil {
		return 0, err
	}
	return breaker.Fill(n), nil
}

// member is the current epoch member at addr, if it is one.
func (s Store) member(ctx context.Context, addr sdk.AccAddress) (types.EpochMember, bool, error) {
	i, ok, err := s.reads.MemberIndex(ctx, addr)
	if err != nil || !ok {
		return types.EpochMember{}, false, err
	}
	m, err := s.reads.MemberAt(ctx, i)
	if err != nil {
		return types.EpochMember{}, false, err
	}
	return m, true, nil
}
