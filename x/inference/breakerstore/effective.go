package breakerstore

import (
	"context"
	"fmt"

	sdk "github.com/cosmos/cosmos-sdk/types"

	"github.com/inferenced/inferenced/x/inference/types"
)

// Reading records through the streaks item (streaks.apply): every reader
// that hands out a record's AttestedMissAt, AttestedCredited or
// ServiceOkAt, or saves the record back, reads the effective record: the
// step's loads, ClaimProbe, ExportGenesis, EachRecord and RewriteRecords.
// Status, NotHealthy, CheckStart and CheckScope show or use none of them.

// loadStreaks reads the streaks item (found false when absent).
func (s Store) loadStreaks(ctx context.Context) (streaks, bool, error) {
	return itemOrZero(ctx, s.streaks, "streaks")
}

// storeStreaks writes the item, or drops it when it carries nothing.
func (s Store) storeStreaks(ctx context.Context, k streaks) error {
	k = k.normalized()
	return setOrDrop(ctx, s.streaks, k, !k.empty(), "streaks")
}

// effectiveOf is h, the stored record of addr, as it reads under the
// item k.
func (s Store) effectiveOf(ctx context.Context, k streaks, addr sdk.AccAddress, h *types.ExecutorHealth) error {
	if k.empty() {
		return nil
	}
	i, member, err := s.reads.MemberIndex(ctx, addr)
	if err != nil {
		return fmt.Errorf("look up held executor %s: %w", addr, err)
	}
	if member {
		k.apply(h, i)
	}
	return nil
}

// walkEffective calls visit with every record, in address order, as it
// reads under the streaks item.
func (s Store) walkEffective(ctx context.Context, visit func(addr sdk.AccAddress, h types.ExecutorHealth) error) error {
	k, _, err := s.loadStreaks(ctx)
	if err != nil {
		return err
	}
	if err := s.records.Walk(ctx, nil, func(addr sdk.AccAddress, h types.ExecutorHealth) (bool, error) {
		if err := s.effectiveOf(ctx, k, addr, &h); err != nil {
			return true, err
		}
		return false, visit(addr, h)
	}); err != nil {
		return fmt.Errorf("walk breaker records: %w", err)
	}
	return nil
}

// syncBits keeps the held bits and the streaks item in step with a
// record save wrote outside the step (before as it was stored; after
// stored unless plain): the member's held and quiet bits follow the
// record, and its streak bits are dropped, since the record written
// carries its effective fields (a record created or dropped never
// inherits another's).
func (s Store) syncBits(ctx context.Context, before, after entry) error {
	storedAfter := !after.plain()
	heldChanged := before.stored != storedAfter || (before.stored && before.quiet()) != (storedAfter && after.quiet())
	k, found, err := s.loadStreaks(ctx)
	if err != nil {
		return err
	}
	if !heldChanged && !found {
		return nil
	}
	i, member, err := s.reads.MemberIndex(ctx, after.addr)
	if err != nil || !member {
		return err
	}
	if heldChanged {
		b, err := s.loadBits(ctx)
		if err != nil {
			return err
		}
		if err := s.storeBits(ctx, b.set(i, storedAfter, storedAfter && after.quiet())); err != nil {
			return err
		}
	}
	if found && k.has(i) {
		return s.storeStreaks(ctx, k.without(i))
	}
	return nil
}
