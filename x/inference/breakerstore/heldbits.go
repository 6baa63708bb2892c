package breakerstore

import (
	"context"
	"errors"
	"fmt"

	sdk "github.com/cosmos/cosmos-sdk/types"

	"github.com/inferenced/inferenced/x/inference/breaker"
	"github.com/inferenced/inferenced/x/inference/types"
)

// heldBits is, by group index, which members the breaker holds a record
// on (held) and which of those are quiet (the `HeldBits` item,
// types.HeldBitsKey). It is how the step maps a block's samples to the
// executors it must visit without walking the records or looking up a
// group index per record.
//
// Invariants: held is exactly the members of the current group with a
// record; quiet is exactly the held members whose record is quiet (see
// quiet), so quiet is a subset of held. save keeps both, on every record
// it writes or drops (the only MemberIndex it needs), Clear drops the
// item at the epoch boundary, and an item with nothing held is not
// stored. Bound: each bitmap is one bit per group index.
type heldBits struct {
	held  bitmap
	quiet bitmap
}

// quiet reports whether a validators' sample can change nothing on the
// record but the field the streaks item carries: it is EXCLUDED (no
// sample is observed during the cooldown) and its ledger holds no miss
// an attested miss could corroborate (evidence.Ledger.AttestedMiss then
// only moves AttestedMissAt). A quiet executor's attested ok changes
// nothing, its miss only AttestedMissAt and its service ok only
// ServiceOkAt.
func (e entry) quiet() bool { return e.rec.State == breaker.Excluded && e.ledger.Held() == 0 }

// set is the bits with member i held and quiet as given.
func (b heldBits) set(i uint32, held, quiet bool) heldBits {
	if held {
		b.held = b.held.with(i)
	} else {
		b.held = b.held.without(i)
	}
	if quiet {
		b.quiet = b.quiet.with(i)
	} else {
		b.quiet = b.quiet.without(i)
	}
	return b
}

// loadBits reads the held bits (none when absent).
func (s Store) loadBits(ctx context.Context) (heldBits, error) {
	b, _, err := itemOrZero(ctx, s.bits, "held bits")
	return b, err
}

// storeBits writes the held bits, or drops the item when nothing is held.
func (s Store) storeBits(ctx context.Context, b heldBits) error {
	return setOrDrop(ctx, s.bits, b, b.held != nil, "held bits")
}

// BuildHeldBits rebuilds the held bits from the records (one walk, one
// MemberIndex per record): the v7 migration, and a genesis import's
// check. It leaves the streaks item alone.
func (s Store) BuildHeldBits(ctx context.Context) error {
	var b heldBits
	if err := s.records.Walk(ctx, nil, func(addr sdk.AccAddress, h types.ExecutorHealth) (bool, error) {
		i, member, err := s.reads.MemberIndex(ctx, addr)
		if err != nil || !member {
			return err != nil, err
		}
		e := entryOf(addr, h)
		b = b.set(i, true, e.quiet())
		return false, nil
	}); err != nil {
		return fmt.Errorf("build breaker held bits: %w", err)
	}
	return s.storeBits(ctx, b)
}

const heldBitsVersion = 1

// heldBitsCodec stores the bits as: version (1 byte), held, quiet
// (appendBitmap); the decoder rejects anything else, quiet bits outside
// held and an empty held.
type heldBitsCodec struct{}

func (heldBitsCodec) Encode(b heldBits) ([]byte, error) {
	if err := b.check(); err != nil {
		return nil, err
	}
	out := make([]byte, 0, 9+len(b.held)+len(b.quiet))
	out = append(out, heldBitsVersion)
	out = appendBitmap(out, b.held)
	return appendBitmap(out, b.quiet), nil
}

func (heldBitsCodec) Decode(in []byte) (heldBits, error) {
	if len(in) < 1 || in[0] != heldBitsVersion {
		return heldBits{}, errors.New("breaker held bits: not a version-1 item")
	}
	var b heldBits
	rest := in[1:]
	var err error
	if b.held, rest, err = readBitmap(rest); err != nil {
		return heldBits{}, fmt.Errorf("breaker held bits: %w", err)
	}
	if b.quiet, rest, err = readBitmap(rest); err != nil {
		return heldBits{}, fmt.Errorf("breaker quiet bits: %w", err)
	}
	if len(rest) != 0 {
		return heldBits{}, fmt.Errorf("breaker held bits: %d bytes after the item", len(rest))
	}
	return b, b.check()
}

func (b heldBits) check() error {
	switch {
	case b.held == nil:
		return errors.New("breaker held bits: an item holding no one is never stored")
	case !b.quiet.subsetOf(b.held):
		return errors.New("breaker held bits: a quiet member that is not held")
	}
	return nil
}

func (c heldBitsCodec) EncodeJSON(b heldBits) ([]byte, error) { return encodeJSON(c.Encode, b) }

func (c heldBitsCodec) DecodeJSON(in []byte) (heldBits, error) { return decodeJSON(c.Decode, in) }

func (heldBitsCodec) Stringify(b heldBits) string {
	return fmt.Sprintf("heldBits{held %x, quiet %x}", []byte(b.held), []byte(b.quiet))
}

func (heldBitsCodec) ValueType() string { return "inference/breaker-held-bits/v1" }

// HasStreaks reports whether the store holds a streaks item (a version-6
// store never does).
func (s Store) HasStreaks(ctx context.Context) (bool, error) {
	has, err := s.streaks.Has(ctx)
	if err != nil {
		return false, fmt.Errorf("look up breaker streaks: %w", err)
	}
	return has, nil
}
