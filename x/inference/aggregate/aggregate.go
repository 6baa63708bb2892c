// Package aggregate turns the verified vote extensions of a commit into at
// most one attested sample per executor: a miss if validators holding more
// than half of C report miss, an ok if more than half report ok, otherwise
// nothing, where C is the voting power of all valid extensions (an empty
// one abstains but still counts in C, so abstaining never lets a minority
// decide). Integers only; executors in group order.
package aggregate

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/inferenced/inferenced/x/inference/verdict"
)

// Vote is one validator's valid extension: its power as recorded in the
// verified commit, and its verdicts in either compact form (a packing of
// n, or a sparse list of exceptions; extensions carry the canonical one),
// unless it abstains.
type Vote struct {
	Power    int64
	Verdicts []byte
	// Abstain: an empty extension. It counts in C and reports nothing; an
	// empty Verdicts without it is the sparse form of an all-ok list.
	Abstain bool
}

// Sample is the attested verdict on the executor at Index in the group.
type Sample struct {
	Index int
	Miss  bool
}

// Aggregate computes the samples for a group of n executors. Every vote
// that does not abstain must hold exactly n verdicts; any other input is an
// error, never a panic.
func Aggregate(votes []Vote, n int) ([]Sample, error) {
	t, err := tallyVotes(votes, n)
	if err != nil {
		return nil, err
	}
	defer t.release()
	// Most executors get a sample in most blocks: one allocation, no growth.
	out := make([]Sample, 0, n)
	for i := 0; i < n; i++ {
		switch t.sample(i) {
		case verdict.Miss:
			out = append(out, Sample{Index: i, Miss: true})
		case verdict.OK:
			out = append(out, Sample{Index: i})
		}
	}
	return out, nil
}

// Packed is Pack(Aggregate(votes, n), n) without the list in between: the
// samples as a bundle carries them, for the proposal handlers.
func Packed(votes []Vote, n int) ([]byte, error) { return PackedAgainst(votes, n, nil) }

// PackedAgainst is Packed for votes whose verdicts are relative to the
// packing ref (verdict.Relative; nil: absolute, Packed itself): the
// absolute samples, as a bundle carries them. The tally is the same as
// Packed's on the relative lists; each executor's three sums are then
// read back through its reference verdict (verdict.AbsoluteOf), so the
// result is Packed of the absolute lists, at the cost of one pass over
// the group (TestPackedAgainstEqualsPackedOfTheAbsoluteLists).
func PackedAgainst(votes []Vote, n int, ref []byte) ([]byte, error) {
	if ref != nil {
		if err := verdict.Check(ref, n); err != nil {
			return nil, fmt.Errorf("reference: %w", err)
		}
	}
	t, err := tallyVotes(votes, n)
	if err != nil {
		return nil, err
	}
	defer t.release()
	out := make([]byte, verdict.PackedLen(n))
	for i := 0; i < n; i++ {
		if i%4 == 0 && i+4 <= n && (ref == nil || ref[i/4] == fourOKs) {
			// Four executors the reference has ok (or no reference):
			// their verdicts are as they read.
			out[i/4] = byte(t.sample(i)) | byte(t.sample(i+1))<<2 | byte(t.sample(i+2))<<4 | byte(t.sample(i+3))<<6
			i += 3
			continue
		}
		r := verdict.OK
		if ref != nil {
			r = verdict.At(ref, i)
		}
		out[i/4] |= byte(t.sampleAgainst(i, r)) << (2 * (i % 4))
	}
	return out, nil
}

// fourOKs is a byte of four packed oks.
const fourOKs = byte(thirtyTwoOKs & 0xff)

// tallyVotes checks the votes and tallies them; the caller releases the
// tally it returns when done with it.
func tallyVotes(votes []Vote, n int) (tally, error) {
	if n < 0 {
		return tally{}, errors.New("negative group size")
	}
	var total uint64
	for i, v := range votes {
		if v.Power < 0 {
			return tally{}, fmt.Errorf("vote %d: negative power %d", i, v.Power)
		}
		if total > math.MaxUint64/2-uint64(v.Power) {
			return tally{}, errors.New("total power overflows")
		}
		total += uint64(v.Power)
		if !v.Abstain && len(v.Verdicts) > verdict.PackedLen(n) {
			return tally{}, fmt.Errorf("vote %d: %w", i, verdict.ErrOversized)
		}
	}
	t := newTally(n, total)
	// Sparse lists are tallied as they are read, packings eight at a time
	// once all are known; each list is checked as it is tallied. A bad list
	// fails the whole tally, which is then dropped.
	lists := distinct(votes)
	packings := make([]Vote, 0, len(lists))
	for _, v := range lists {
		if !verdict.IsSparse(v.Verdicts, n) {
			packings = append(packings, v)
			continue
		}
		if err := t.addSparse(v.Verdicts, n, uint64(v.Power)); err != nil {
			t.release()
			return tally{}, firstError(lists, n)
		}
	}
	if !t.addPackings(packings, n) {
		t.release()
		return tally{}, firstError(lists, n)
	}
	return t, nil
}

// firstError is the error of the first bad list, in byte order, as its
// check words it: whatever the order the tally met them in, a set of votes
// fails with one error, the one of checking each list in turn.
func firstError(lists []Vote, n int) error {
	for _, v := range lists {
		check := verdict.Check
		if verdict.IsSparse(v.Verdicts, n) {
			check = func(bz []byte, n int) error { return verdict.Exceptions(bz, n, nil) }
		}
		if err := check(v.Verdicts, n); err != nil {
			return err
		}
	}
	return errors.New("a verdict list was refused") // unreachable: the tally refuses only what these checks refuse
}

// distinct merges the votes that do not abstain and have identical
// verdicts (summing their power), in byte order: honest validators mostly
// agree, so the tally then runs over a few distinct lists instead of every
// validator. Extensions carry the canonical form, so equal lists have equal
// bytes; two forms of one list (possible only in direct callers' input)
// are merely tallied apart.
func distinct(votes []Vote) []Vote {
	// Sorted by a key of each list's first eight bytes (zero-padded, big
	// endian: the same order as the bytes), so most comparisons are of
	// two integers; equal keys fall back to the bytes.
	type keyed struct {
		key uint64
		v   Vote
	}
	sorted := make([]keyed, 0, len(votes))
	for _, v := range votes {
		if !v.Abstain {
			var head [8]byte
			copy(head[:], v.Verdicts)
			sorted = append(sorted, keyed{binary.BigEndian.Uint64(head[:]), v})
		}
	}
	slices.SortFunc(sorted, func(a, b keyed) int {
		if c := cmp.Compare(a.key, b.key); c != 0 {
			return c
		}
		return bytes.Compare(a.v.Verdicts, b.v.Verdicts)
	})
	out := make([]Vote, 0, len(sorted))
	for _, k := range sorted {
		if last := len(out) - 1; last >= 0 && bytes.Equal(out[last].Verdicts, k.v.Verdicts) {
			out[last].Power += k.v.Power
			continue
		}
		out = append(out, k.v)
	}
	return out
}
