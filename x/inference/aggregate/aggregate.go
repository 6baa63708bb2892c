// Package aggregate turns the verified vote extensions of a commit into at
// most one attested sample per executor: a miss if validators holding more
// than half of C report miss, an ok if more than half report ok, otherwise
// nothing, where C is the voting power of all valid extensions (an empty
// one abstains but still counts in C, so abstaining never lets a minority
// decide). Integers only; executors in group order.
package aggregate

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/inferenced/inferenced/x/inference/verdict"
)

// Vote is one validator's valid extension: its power as recorded in the
// verified commit, and its verdicts in either compact form
// (either form verdict.CheckCompact reads: a packing of n, or a sparse list of exceptions;
// extensions carry the canonical one), unless it abstains.
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
func Packed(votes []Vote, n int) ([]byte, error) {
	t, err := tallyVotes(votes, n)
	if err != nil {
		return nil, err
	}
	out := make([]byte, verdict.PackedLen(n))
	for i := 0; i < n; i++ {
		out[i/4] |= byte(t.sample(i)) << (2 * (i % 4))
	}
	return out, nil
}

// tallyVotes checks the votes and tallies them.
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
	t := newTally(n)
	t.total = total
	// Each distinct list is checked as it is tallied: a bad one fails the
	// whole tally, which is then dropped.
	for _, v := range distinct(votes) {
		if verdict.IsSparse(v.Verdicts, n) {
			if err := t.addSparse(v.Verdicts, n, uint64(v.Power)); err != nil {
				return tally{}, err
			}
			continue
		}
		if err := verdict.Check(v.Verdicts, n); err != nil {
			return tally{}, err
		}
		t.add(v.Verdicts, uint64(v.Power))
	}
	return t, nil
}

// tally sums the power behind each executor's ok and miss. Most verdict
// lists are long runs of oks (or of unknowns): a sparse list credits its
// power to every executor at once (sparseOK) and debits its exceptions; in
// a packing, a word of 32 oks, or a byte of 4, is credited once to the word
// or byte and spread when read.
type tally struct {
	total    uint64 // C: the power of every vote, abstentions included
	perExec  []execTally
	byteOK   []uint64 // per packed byte of four oks
	wordOK   []uint64 // per 8-byte word of 32 oks
	sparseOK uint64   // power of the sparse lists
}

// execTally is one executor's: ok power beyond the shortcuts (wrapping:
// sparse exceptions subtract what sparseOK credited, so the sum read in
// sample is exact though a term may wrap), and miss power.
type execTally struct{ ok, miss uint64 }

func newTally(n int) tally {
	size := verdict.PackedLen(n)
	return tally{perExec: make([]execTally, n), byteOK: make([]uint64, size), wordOK: make([]uint64, (size+7)/8)}
}

// sample is executor i's attested verdict: Miss or OK with a strict
// majority of C, Unknown (no sample) otherwise.
func (t *tally) sample(i int) verdict.Verdict {
	e := t.perExec[i]
	ok := t.sparseOK + e.ok + t.byteOK[i/4] + t.wordOK[i/32]
	switch {
	case 2*e.miss > t.total:
		return verdict.Miss
	case 2*ok > t.total:
		return verdict.OK
	}
	return verdict.Unknown
}

// addSparse tallies one sparse list of the group with power p, or fails
// as verdict.Exceptions does.
func (t *tally) addSparse(bz []byte, n int, p uint64) error {
	t.sparseOK += p
	for next := 0; len(bz) > 0; {
		i, v, rest, err := verdict.NextException(bz, next, n)
		if err != nil {
			return err
		}
		t.perExec[i].ok -= p
		t.perExec[i].miss += p * isMiss[v]
		bz, next = rest, i+1
	}
	return nil
}

// add tallies one checked packing of the group with power p.
func (t *tally) add(packed []byte, p uint64) {
	j := 0
	for ; j+8 <= len(packed); j += 8 {
		switch binary.LittleEndian.Uint64(packed[j:]) {
		case 0:
			continue // 32 unknowns
		case thirtyTwoOKs:
			t.wordOK[j/8] += p
			continue
		}
		for k := j; k < j+8; k++ {
			t.addByte(k, packed[k], p)
		}
	}
	for ; j < len(packed); j++ {
		t.addByte(j, packed[j], p)
	}
}

func (t *tally) addByte(j int, b byte, p uint64) {
	switch b {
	case 0:
		return // four unknowns
	case fourOKs:
		t.byteOK[j] += p
		return
	}
	for k := 0; k < 4 && 4*j+k < len(t.perExec); k++ {
		v := b >> (2 * k) & 3
		e := &t.perExec[4*j+k]
		e.ok += p * isOK[v]
		e.miss += p * isMiss[v]
	}
}

// fourOKs is a byte of four ok verdicts (padding is zero, so a last byte
// of fewer verdicts never equals it).
const fourOKs = byte(verdict.OK | verdict.OK<<2 | verdict.OK<<4 | verdict.OK<<6)

// thirtyTwoOKs is eight bytes of four oks each, read as one word.
const thirtyTwoOKs = uint64(fourOKs) * 0x0101010101010101

// isOK and isMiss weigh a 2-bit verdict without branching.
var (
	isOK   = [4]uint64{verdict.OK: 1}
	isMiss = [4]uint64{verdict.Miss: 1}
)

// distinct merges the votes that do not abstain and have identical
// verdicts (summing their power), in byte order: honest validators mostly
// agree, so the tally then runs over a few distinct lists instead of every
// validator. Extensions carry the canonical form, so equal lists have equal
// bytes; two forms of one list (possible only in direct callers' input)
// are merely tallied apart.
func distinct(votes []Vote) []Vote {
	sorted := make([]Vote, 0, len(votes))
	for _, v := range votes {
		if !v.Abstain {
			sorted = append(sorted, v)
		}
	}
	slices.SortFunc(sorted, func(a, b Vote) int { return bytes.Compare(a.Verdicts, b.Verdicts) })
	out := sorted[:0]
	for _, v := range sorted {
		if last := len(out) - 1; last >= 0 && bytes.Equal(out[last].Verdicts, v.Verdicts) {
			out[last].Power += v.Power
			continue
		}
		out = append(out, v)
	}
	return out
}
