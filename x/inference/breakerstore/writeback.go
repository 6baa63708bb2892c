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
)

// stepRecords is one step's view of the breaker records and the record
// writes it owes the store: each record is written once, at the end of
// the step (flush), however many samples changed it, instead of once per
// sample. It is exactly the store the save-per-sample step saw and left,
// read through the streaks item:
//
//   - Reads. An executor the step has saved reads back as save would have
//     stored it (slot.cur: entry.reloaded); another reads from the store
//     (records.Has first: a missing record costs no error) through the
//     streaks item the step started from (streaks.apply). Either then
//     reads the samples the step left out of it so far (overlay).
//   - Writes. save is Store.save with two writes deferred: the record
//     (put or dropped) and the record count. The cooldown entry and the
//     gate are written at once, so the cap's lazy walk of the gates,
//     promoteDue's walk of the cooldowns and reportGauges read what they
//     read before. The held bits follow each save in memory. flush then
//     writes each record the step wrote, in address order, with its last
//     value, and the count once; then the streaks item and the held bits
//     (streakstep.go). A block's writes go to a cache store, which keeps
//     per key only that the key was written and its last value (a set,
//     or a delete: one of a key the store lacks changes nothing): so the
//     records and indexes are those of the save-per-sample step, read
//     through the item (TestStepMatchesLegacy). A cooldown entry save
//     removes and sets again under the same key (an EXCLUDED record
//     rewritten) is only set, for the same reason.
//
// The step runs in the pre-blocker, whose store reads no gas meter
// charges to anything a block's results carry, so reading the records
// this way instead of one Get per sample changes nothing but the time.
// Maps here are only looked up; order comes from slices.
type stepRecords struct {
	s      Store
	ctx    context.Context
	height int64
	// index is the step's MemberIndex (asked once per executor).
	index func(sdk.AccAddress) (uint32, bool, error)

	// streak is the item the step started from (zero when absent);
	// missNow and okNow the samples this step left out of the records so
	// far (skip): the misses and service oks of quiet executors.
	streak         streaks
	streakFound    bool
	missNow, okNow bitmap
	// bits are the held bits as the step's saves left them.
	bits        heldBits
	bitsChanged bool

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

// newStepRecords reads the streaks item (of the current epoch, or none)
// and the held bits the step starts from.
func newStepRecords(s Store, ctx context.Context, height int64, index func(sdk.AccAddress) (uint32, bool, error)) (*stepRecords, error) {
	r := &stepRecords{s: s, ctx: ctx, height: height, index: index, slotOf: map[string]*slot{}}
	var err error
	if r.streak, r.streakFound, err = s.loadStreaks(ctx); err != nil {
		return nil, err
	}
	if r.streakFound {
		epoch, err := s.reads.EpochIndex(ctx)
		if err != nil {
			return nil, err
		}
		if r.streak.epoch != epoch {
			return nil, fmt.Errorf("breaker streaks of epoch %d in epoch %d: the boundary did not clear them", r.streak.epoch, epoch)
		}
	}
	if r.bits, err = s.loadBits(ctx); err != nil {
		return nil, err
	}
	return r, nil
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

// load returns an executor's entry as Store.load would read it now,
// with the samples the step left out of the records so far.
func (r *stepRecords) load(addr sdk.AccAddress) (entry, error) {
	e, err := r.loadRecord(addr)
	if err != nil || !e.stored || (r.missNow == nil && r.okNow == nil) {
		return e, err
	}
	i, member, err := r.index(addr)
	if err != nil || !member {
		return e, err
	}
	return r.overlay(e, i), nil
}

// overlay is e with the samples the step left out of member i's record.
func (r *stepRecords) overlay(e entry, i uint32) entry {
	if r.missNow.has(i) && e.ledger.AttestedMissAt != r.height {
		e.ledger.AttestedMissAt, e.ledger.AttestedCredited = r.height, nil
	}
	if r.okNow.has(i) {
		e.rec.ServiceOKAt = r.height
	}
	return e
}

// loadRecord is the entry as the slot or the store through the item the
// step started from has it.
func (r *stepRecords) loadRecord(addr sdk.AccAddress) (entry, error) {
	if sl, ok := r.slotOf[string(addr)]; ok {
		return sl.cur, nil
	}
	has, err := r.s.records.Has(r.ctx, addr)
	if err != nil {
		return entry{}, fmt.Errorf("load breaker record of %s: %w", addr, err)
	}
	if !has {
		return entry{addr: addr}, nil
	}
	h, err := r.s.records.Get(r.ctx, addr)
	if err != nil {
		return entry{}, fmt.Errorf("load breaker record of %s: %w", addr, err)
	}
	if !r.streak.empty() {
		i, member, err := r.index(addr)
		if err != nil {
			return entry{}, fmt.Errorf("look up held executor %s: %w", addr, err)
		}
		if member {
			r.streak.apply(&h, i)
		}
	}
	return entryOf(addr, h), nil
}

// quiet reports whether member i is quiet now (heldBits).
func (r *stepRecords) quiet(i uint32) bool { return r.bits.quiet.has(i) }

// skip leaves a validators' sample of the quiet member i out of its
// record: a miss moves its AttestedMissAt, a service ok its ServiceOkAt,
// and nothing else (quiet); an attested ok changes nothing.
func (r *stepRecords) skip(i uint32, miss, service bool) {
	switch {
	case miss:
		r.missNow = r.missNow.with(i)
	case service:
		r.okNow = r.okNow.with(i)
	}
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
	if err := r.syncBits(before, after); err != nil {
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

// syncBits keeps the held bits in step with a save (Store.syncBits's
// bits, in memory): a record created or dropped also loses the samples
// the step left out of its record (they were about no record, or are
// gone with it).
func (r *stepRecords) syncBits(before, after entry) error {
	storedAfter := !after.plain()
	if before.stored == storedAfter && (before.stored && before.quiet()) == (storedAfter && after.quiet()) {
		return nil
	}
	i, member, err := r.index(after.addr)
	if err != nil {
		return fmt.Errorf("look up held executor %s: %w", after.addr, err)
	}
	if !member {
		return nil
	}
	r.bits, r.bitsChanged = r.bits.set(i, storedAfter, storedAfter && after.quiet()), true
	if before.stored != storedAfter {
		r.missNow, r.okNow = r.missNow.without(i), r.okNow.without(i)
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
// with its last value, the streaks item and the held bits
// (flushStreaks), and the record count if it changed.
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
	if err := r.flushStreaks(); err != nil {
		return err
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
