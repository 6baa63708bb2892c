package breakerstore

import (
	"bytes"
	"context"
	"fmt"

	sdk "github.com/cosmos/cosmos-sdk/types"

	"github.com/inferenced/inferenced/x/inference/types"
)

// streakInvariants checks the held bits and the streaks item against the
// stored records: the held bits are exactly the members with a record
// and the quiet ones among them; the item is about the current epoch,
// every bit it sets is a member with a record, and no such record stores
// the field the item carries above the item's height for it.
func (s Store) streakInvariants(ctx context.Context) error {
	var want heldBits
	stored := map[uint32]types.ExecutorHealth{} // only looked up
	if err := s.records.Walk(ctx, nil, func(addr sdk.AccAddress, h types.ExecutorHealth) (bool, error) {
		i, member, err := s.reads.MemberIndex(ctx, addr)
		if err != nil || !member {
			return err != nil, err
		}
		want = want.set(i, true, entryOf(addr, h).quiet())
		stored[i] = h
		return false, nil
	}); err != nil {
		return fmt.Errorf("walk breaker records: %w", err)
	}
	got, err := s.loadBits(ctx)
	if err != nil {
		return err
	}
	if !bytes.Equal(got.held, want.held) || !bytes.Equal(got.quiet, want.quiet) {
		return fmt.Errorf("breaker held bits %x / quiet %x, the records imply %x / %x",
			[]byte(got.held), []byte(got.quiet), []byte(want.held), []byte(want.quiet))
	}
	k, found, err := s.loadStreaks(ctx)
	if err != nil || !found {
		return err
	}
	epoch, err := s.reads.EpochIndex(ctx)
	if err != nil {
		return err
	}
	if k.epoch != epoch {
		return fmt.Errorf("breaker streaks of epoch %d in epoch %d", k.epoch, epoch)
	}
	return k.miss.union(k.ok).each(func(i uint32) error {
		h, ok := stored[i]
		switch {
		case !ok:
			return fmt.Errorf("breaker streaks carry member %d, which has no record", i)
		case k.miss.has(i) && h.AttestedMissAt > k.missAt:
			return fmt.Errorf("breaker record of member %d stores AttestedMissAt %d above the streak's %d", i, h.AttestedMissAt, k.missAt)
		case k.ok.has(i) && h.ServiceOkAt > k.okAt:
			return fmt.Errorf("breaker record of member %d stores ServiceOkAt %d above the streak's %d", i, h.ServiceOkAt, k.okAt)
		}
		return nil
	})
}
