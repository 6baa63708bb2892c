package aggregate

// The tally as it was before it counted exceptions only (commit 2d859e8),
// copied verbatim but for the names (legacy*): the reference the new tally
// must equal byte for byte (differential_test.go), and the baseline of
// BenchmarkTally. It credits oks and debits sparse exceptions per executor,
// and adds a packing byte by byte.

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/inferenced/inferenced/x/inference/verdict"
)

// legacyAggregate computes the samples for a group of n executors. Every vote
// that does not abstain must hold exactly n verdicts; any other input is an
// error, never a panic.
func legacyAggregate(votes []Vote, n int) ([]Sample, error) {
	t, err := legacyTallyVotes(votes, n)
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

// legacyPacked is Pack(legacyAggregate(votes, n), n) without the list in between: the
// samples as a bundle carries them, for the proposal handlers.
func legacyPacked(votes []Vote, n int) ([]byte, error) {
	t, err := legacyTallyVotes(votes, n)
	if err != nil {
		return nil, err
	}
	out := make([]byte, verdict.PackedLen(n))
	for i := 0; i < n; i++ {
		out[i/4] |= byte(t.sample(i)) << (2 * (i % 4))
	}
	return out, nil
}

// legacyTallyVotes checks the votes and tallies them.
func legacyTallyVotes(votes []Vote, n int) (legacyTally, error) {
	if n < 0 {
		return legacyTally{}, errors.New("negative group size")
	}
	var total uint64
	for i, v := range votes {
		if v.Power < 0 {
			return legacyTally{}, fmt.Errorf("vote %d: negative power %d", i, v.Power)
		}
		if total > math.MaxUint64/2-uint64(v.Power) {
			return legacyTally{}, errors.New("total power overflows")
		}
		total += uint64(v.Power)
		if !v.Abstain && len(v.Verdicts) > verdict.PackedLen(n) {
			return legacyTally{}, fmt.Errorf("vote %d: %w", i, verdict.ErrOversized)
		}
	}
	t := legacyNewTally(n)
	t.total = total
	// Each distinct list is checked as it is tallied: a bad one fails the
	// whole tally, which is then dropped.
	for _, v := range legacyDistinct(votes) {
		if verdict.IsSparse(v.Verdicts, n) {
			if err := t.addSparse(v.Verdicts, n, uint64(v.Power)); err != nil {
				return legacyTally{}, err
			}
			continue
		}
		if err := verdict.Check(v.Verdicts, n); err != nil {
			return legacyTally{}, err
		}
		t.add(v.Verdicts, uint64(v.Power))
	}
	return t, nil
}

// legacyTally sums the power behind each executor's ok and miss. Most verdict
// lists are long runs of oks (or of unknowns): a sparse list credits its
// power to every executor at once (sparseOK) and debits its exceptions; in
// a packing, a word of 32 oks, or a byte of 4, is credited once to the word
// or byte and spread when read.
type legacyTally struct {
	total    uint64 // C: the power of every vote, abstentions included
	perExec  []legacyExecTally
	byteOK   []uint64 // per packed byte of four oks
	wordOK   []uint64 // per 8-byte word of 32 oks
	sparseOK uint64   // power of the sparse lists
}

// legacyExecTally is one executor's: ok power beyond the shortcuts (wrapping:
// sparse exceptions subtract what sparseOK credited, so the sum read in
// sample is exact though a term may wrap), and miss power.
type legacyExecTally struct{ ok, miss uint64 }

func legacyNewTally(n int) legacyTally {
	size := verdict.PackedLen(n)
	return legacyTally{perExec: make([]legacyExecTally, n), byteOK: make([]uint64, size), wordOK: make([]uint64, (size+7)/8)}
}

// sample is executor i's attested verdict: Miss or OK with a strict
// majority of C, Unknown (no sample) otherwise.
func (t *legacyTally) sample(i int) verdict.Verdict {
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
func (t *legacyTally) addSparse(bz []byte, n int, p uint64) error {
	t.sparseOK += p
	for next := 0; len(bz) > 0; {
		i, v, rest, err := verdict.NextException(bz, next, n)
		if err != nil {
			return err
		}
		t.perExec[i].ok -= p
		t.perExec[i].miss += p * legacyIsMiss[v]
		bz, next = rest, i+1
	}
	return nil
}

// add tallies one checked packing of the group with power p.
func (t *legacyTally) add(packed []byte, p uint64) {
	j := 0
	for ; j+8 <= len(packed); j += 8 {
		switch binary.LittleEndian.Uint64(packed[j:]) {
		case 0:
			continue // 32 unknowns
		case legacyThirtyTwoOKs:
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

func (t *legacyTally) addByte(j int, b byte, p uint64) {
	switch b {
	case 0:
		return // four unknowns
	case legacyFourOKs:
		t.byteOK[j] += p
		return
	}
	for k := 0; k < 4 && 4*j+k < len(t.perExec); k++ {
		v := b >> (2 * k) & 3
		e := &t.perExec[4*j+k]
		e.ok += p * legacyIsOK[v]
		e.miss += p * legacyIsMiss[v]
	}
}

// legacyFourOKs is a byte of four ok verdicts (padding is zero, so a last byte
// of fewer verdicts never equals it).
const legacyFourOKs = byte(verdict.OK | verdict.OK<<2 | verdict.OK<<4 | verdict.OK<<6)

// legacyThirtyTwoOKs is eight bytes of four oks each, read as one word.
const legacyThirtyTwoOKs = uint64(legacyFourOKs) * 0x0101010101010101

// legacyIsOK and legacyIsMiss weigh a 2-bit verdict without branching.
var (
	legacyIsOK   = [4]uint64{verdict.OK: 1}
	legacyIsMiss = [4]uint64{verdict.Miss: 1}
)

// legacyDistinct merges the votes that do not abstain and have identical
// verdicts (summing their power), in byte order: honest validators mostly
// agree, so the tally then runs over a few distinct lists instead of every
// validator. Extensions carry the canonical form, so equal lists have equal
// bytes; two forms of one list (possible only in direct callers' input)
// are merely tallied apart.
func legacyDistinct(votes []Vote) []Vote {
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
