package breakerstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"

	"cosmossdk.io/collections"

	sdk "github.com/cosmos/cosmos-sdk/types"

	"github.com/inferenced/inferenced/x/inference/breaker"
	"github.com/inferenced/inferenced/x/inference/types"
)

// stepRecords is one step's view of the breaker records and the record
// writes it owes the store: each record is written once, at the end of
// the step (flush), however many samples changed it, instead of once per
// sample. It is exactly the store the save-per-sample step saw and left:
//
//   - Reads. An executor the step has saved reads back as save would have
//     stored it (slot.cur: entry.reloaded). The records the step started
//     from are walked and decoded at most once (found), when the step
//     first needs the executors it holds; an executor neither saved nor
//     found has no record. Before that walk, a load reads the store
//     (records.Has first: a missing record costs no error).
//   - Writes. save is Store.save with two writes deferred: the record
//     (put or dropped) and the record count. The cooldown entry and the
//     gate are written at once, so the cap's lazy walk of the gates,
//     promoteDue's walk of the cooldowns and reportGauges read what they
//     read before. flush then writes each record the step wrote, in
//     address order, with its last value, and the count once. A block's
//     writes go to a cache store, which keeps per key only that the key
//     was written and its last value (a set, or a delete: one of a key
//     the store lacks changes nothing): so the keys written and their
//     values, and the commit hash, are those of the save-per-sample step
//     (TestStepMatchesLegacy). A cooldown entry save removes and sets
//     again under the same key (an EXCLUDED record rewritten) is only
//     set, for the same reason.
//
// The step runs in the pre-blocker, whose store reads no gas meter
// charges to anything a block's results carry, so reading the records
// this way instead of one Get per sample changes nothing but the time.
// Maps here are only looked up; order comes from slices.
type stepRecords struct {
	s   Store
	ctx context.Context

	// found are the records the step started from, in address order
	// (walked at most once; foundErr is the walk's error, returned to
	// every caller that needs it, as each walk would have returned it).
	walked   bool
	found    []foundRecord
	foundAt  map[string]int
	foundErr error

	// slots are the executors the step has saved, in the order of their
	// first save; slotOf finds one by address.
	slots  []*slot
	slotOf map[string]*slot

	// count is the record count as the step's saves left it: read once,
	// written by flush if any save changed it.
	count        uint64
	countRead    bool
	countWritten bool
}

type foundRecord struct {
	addr sdk.AccAddress
	h    types.ExecutorHealth
}

// slot is an executor the step has saved: what a load returns now, and
// the write of its record that flush owes.
type slot struct {
	cur   entry // the entry as the store would read it back
	write entry // the entry a put stores
	op    recordOp
}

type recordOp uint8

const (
	opNone recordOp = iota
	opPut
	opDrop
)

func newStepRecords(s Store, ctx context.Context) *stepRecords {
	return &stepRecords{s: s, ctx: ctx, slotOf: map[string]*slot{}}
}

// heldCount is the number of records as the step's saves left it.
func (r *stepRecords) heldCount() (uint64, error) {
	if !r.countRead {
		n, err := r.s.heldCount(r.ctx)
		if err != nil {
			return 0, err
		}
		r.count, r.countRead = n, true
	}
	return r.count, nil
}

// walk reads the records the step started from, once. The store's records
// do not change during the step (flush writes them at its end), so the
// walk sees them whenever it runs. A block in which the breaker holds no
// one opens no iterator.
func (r *stepRecords) walk() error {
	if r.walked {
		return r.foundErr
	}
	r.walked = true
	count, err := r.s.heldCount(r.ctx)
	if err != nil || count == 0 {
		r.foundErr = err
		return err
	}
	r.foundAt = make(map[string]int, count)
	r.found = make([]foundRecord, 0, count)
	if len(r.slots) == 0 {
		// Most of the records the step starts from get a sample.
		r.slotOf = make(map[string]*slot, count)
	}
	if err := r.s.records.Walk(r.ctx, nil, func(addr sdk.AccAddress, h types.ExecutorHealth) (bool, error) {
		r.foundAt[string(addr)] = len(r.found)
		r.found = append(r.found, foundRecord{addr: addr, h: h})
		return false, nil
	}); err != nil {
		r.found, r.foundAt = nil, nil
		r.foundErr = fmt.Errorf("walk breaker records: %w", err)
	}
	return r.foundErr
}

// load returns an executor's entry as Store.load would read it now.
func (r *stepRecords) load(addr sdk.AccAddress) (entry, error) {
	if sl, ok := r.slotOf[string(addr)]; ok {
		return sl.cur, nil
	}
	if r.walked && r.foundErr == nil {
		if i, ok := r.foundAt[string(addr)]; ok {
			return entryOf(addr, cloneRecord(r.found[i].h)), nil
		}
		return entry{addr: addr}, nil
	}
	has, err := r.s.records.Has(r.ctx, addr)
	if err != nil {
		return entry{}, fmt.Errorf("load breaker record of %s: %w", addr, err)
	}
	if !has {
		return entry{addr: addr}, nil
	}
	return r.s.load(r.ctx, addr)
}

// cloneRecord is h with slices of its own where entryOf would keep h's
// (entryOf copies the misses), as a fresh decoding would give: an entry
// never shares a slice with the record the walk decoded.
func cloneRecord(h types.ExecutorHealth) types.ExecutorHealth {
	h.AttestedCredited = slices.Clone(h.AttestedCredited)
	h.ScopedAgents = slices.Clone(h.ScopedAgents)
	return h
}

// reloaded is what loading the record save stores for e returns:
// entryOf(e.addr, the proto of e decoded). Its probe is in flight exactly
// when it names one; slices are its own, nil when empty.
func (e entry) reloaded() entry {
	e.stored = true
	e.rec.ProbeInFlight = e.probe.id != ""
	e.ledger.Misses = nilIfEmpty(slices.Clone(e.ledger.Misses))
	e.ledger.AttestedCredited = nilIfEmpty(slices.Clone(e.ledger.AttestedCredited))
	e.scope.Agents = nilIfEmpty(slices.Clone(e.scope.Agents))
	return e
}

func nilIfEmpty[T any](s []T) []T {
	if len(s) == 0 {
		return nil
	}
	return s
}

func (r *stepRecords) slot(addr sdk.AccAddress) *slot {
	sl, ok := r.slotOf[string(addr)]
	if !ok {
		sl = &slot{}
		r.slotOf[string(addr)] = sl
		r.slots = append(r.slots, sl)
	}
	return sl
}

// save is Store.save with the record's write and the count's deferred to
// flush (see stepRecords).
func (r *stepRecords) save(before, after entry) error {
	s, ctx := r.s, r.ctx
	if !after.rec.ProbeInFlight {
		after.probe = probeRef{}
	}
	if before.stored && before.same(after) {
		return nil
	}
	excluded := !after.plain() && after.rec.State == breaker.Excluded
	if before.stored && before.rec.State == breaker.Excluded &&
		(!excluded || after.rec.EligibleAt() != before.rec.EligibleAt()) {
		if err := s.cooldowns.Remove(ctx, collections.Join(before.rec.EligibleAt(), before.addr)); err != nil {
			return fmt.Errorf("unindex cooldown of %s: %w", before.addr, err)
		}
	}
	if after.plain() && !before.stored {
		return nil
	}
	if err := r.syncGate(before, after); err != nil {
		return err
	}
	sl := r.slot(after.addr)
	if after.plain() {
		sl.op, sl.cur, sl.write = opDrop, entry{addr: after.addr}, entry{}
		return r.countRecords(-1)
	}
	if excluded {
		if err := s.cooldowns.Set(ctx, collections.Join(after.rec.EligibleAt(), after.addr)); err != nil {
			return fmt.Errorf("index cooldown of %s: %w", after.addr, err)
		}
	}
	sl.op, sl.cur, sl.write = opPut, after.reloaded(), after
	if !before.stored {
		return r.countRecords(+1)
	}
	return nil
}

// syncGate is Store.syncGate, encoding the address only for a gate it
// writes.
func (r *stepRecords) syncGate(before, after entry) error {
	was, hadGate := breaker.GateOf(before.rec)
	hadGate = hadGate && before.stored
	now, hasGate := breaker.GateOf(after.rec)
	if !(hasGate && (!hadGate || now != was)) && !(!hasGate && hadGate) {
		return nil
	}
	address, err := r.s.ac.BytesToString(after.addr)
	if err != nil {
		return fmt.Errorf("encode executor: %w", err)
	}
	return r.s.syncGate(r.ctx, address, before, after)
}

// countRecords is Store.countRecords on the step's count.
func (r *stepRecords) countRecords(delta int) error {
	n, err := r.heldCount()
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
	r.count, r.countWritten = n, true
	return nil
}

// flush writes the records the step wrote, in address order, each once
// with its last value, and the record count if it changed.
func (r *stepRecords) flush() error {
	s, ctx := r.s, r.ctx
	slices.SortFunc(r.slots, func(a, b *slot) int { return bytes.Compare(a.cur.addr, b.cur.addr) })
	for _, sl := range r.slots {
		switch sl.op {
		case opPut:
			h, err := sl.write.proto(s.ac)
			if err != nil {
				return err
			}
			if err := s.records.Set(ctx, sl.write.addr, h); err != nil {
				return fmt.Errorf("store breaker record of %s: %w", sl.write.addr, err)
			}
		case opDrop:
			if err := s.records.Remove(ctx, sl.cur.addr); err != nil {
				return fmt.Errorf("drop breaker record of %s: %w", sl.cur.addr, err)
			}
		}
	}
	if !r.countWritten {
		return nil
	}
	if r.count == 0 {
		if err := s.recordCount.Remove(ctx); err != nil {
			return fmt.Errorf("drop breaker record count: %w", err)
		}
		return nil
	}
	if err := s.recordCount.Set(ctx, r.count); err != nil {
		return fmt.Errorf("store breaker record count: %w", err)
	}
	return nil
}
