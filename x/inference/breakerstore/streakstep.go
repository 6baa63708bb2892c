package breakerstore

import (
	"fmt"

	sdk "github.com/cosmos/cosmos-sdk/types"
)

// flushStreaks writes the streaks item the step leaves, and the held bits
// if a save changed them. Per kind (misses, service oks):
//
//   - The step left samples out (missNow): the item carries them at this
//     block's height. The executors the item carried at its old height
//     that this step neither left out again nor wrote (ended: an ok, an
//     unknown, a visit that changed nothing) get their field written into
//     their record, as the item said it.
//   - It left none out: the item keeps its old height and executors (a
//     block without samples of the kind ends nothing), but for those the
//     step wrote.
//
// A record the step wrote carries its fields as the save-per-sample step
// stored them, so the old item no longer speaks for it; one it left a
// sample out of after or before writing it reads that sample through the
// new item (the record's own field is at most this height).
func (r *stepRecords) flushStreaks() error {
	old := r.streak
	var written bitmap
	for _, sl := range r.slots {
		i, member, err := r.index(sl.cur.addr)
		if err != nil {
			return fmt.Errorf("look up held executor %s: %w", sl.cur.addr, err)
		}
		if member {
			written = written.with(i)
		}
	}
	next := streaks{epoch: old.epoch, missAt: old.missAt, miss: old.miss.minus(written), okAt: old.okAt, ok: old.ok.minus(written)}
	var ended streaks // the fields to write into records, as old said them
	if r.missNow != nil {
		ended.missAt, ended.miss = old.missAt, next.miss.minus(r.missNow)
		next.missAt, next.miss = r.height, r.missNow
	}
	if r.okNow != nil {
		ended.okAt, ended.ok = old.okAt, next.ok.minus(r.okNow)
		next.okAt, next.ok = r.height, r.okNow
	}
	if err := r.materialize(ended); err != nil {
		return err
	}
	next = next.normalized()
	if !r.streakFound && !next.empty() {
		epoch, err := r.s.reads.EpochIndex(r.ctx)
		if err != nil {
			return err
		}
		next.epoch = epoch
	}
	if (r.streakFound || !next.empty()) && !next.equal(old) {
		if err := r.s.storeStreaks(r.ctx, next); err != nil {
			return err
		}
	}
	if r.bitsChanged {
		return r.s.storeBits(r.ctx, r.bits)
	}
	return nil
}

// materialize writes into each record ended names the fields ended
// carries for it (streaks.apply), in group order; the record's indexes
// do not change (neither field is in a gate, a cooldown or the count).
func (r *stepRecords) materialize(ended streaks) error {
	return ended.miss.union(ended.ok).each(func(i uint32) error {
		m, err := r.s.reads.MemberAt(r.ctx, i)
		if err != nil {
			return err
		}
		addr, err := r.s.ac.StringToBytes(m.Address)
		if err != nil {
			return fmt.Errorf("epoch member %d address: %w", i, err)
		}
		h, err := r.s.records.Get(r.ctx, addr)
		if err != nil {
			return fmt.Errorf("load breaker record of %s: %w", sdk.AccAddress(addr), err)
		}
		was := h.AttestedMissAt
		okWas := h.ServiceOkAt
		ended.apply(&h, i)
		if h.AttestedMissAt == was && h.ServiceOkAt == okWas {
			return nil
		}
		if err := r.s.records.Set(r.ctx, addr, h); err != nil {
			return fmt.Errorf("store breaker record of %s: %w", sdk.AccAddress(addr), err)
		}
		return nil
	})
}
