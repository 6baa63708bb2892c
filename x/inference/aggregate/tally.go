package aggregate

import (
	"encoding/binary"
	"math/bits"

	"github.com/inferenced/inferenced/x/inference/verdict"
)

// tally sums, per executor, only the power behind its exceptions (miss and
// unknown); the power behind an ok is what is left of the lists' power.
// Honest lists are mostly oks, so the work is the exceptions', not
// validators x executors: a sparse list lists only them, and a packing is
// read eight bytes at a time, its exceptions picked out of each word with
// bit masks.
type tally struct {
	total   uint64 // C: the power of every vote, abstentions included
	listed  uint64 // the power of the votes that carry a list
	perExec []exceptions
	// wordUnknown is, per 8-byte word of the packings, the power of those
	// whose word is 32 unknowns (a validator that knows nothing of a run
	// of executors): one addition instead of 32.
	wordUnknown []uint64
}

// exceptions is the power of the lists that say miss, and unknown, of one
// executor.
type exceptions struct{ miss, unknown uint64 }

func newTally(n int, total uint64) tally {
	return tally{total: total, perExec: make([]exceptions, n), wordUnknown: make([]uint64, (n+31)/32)}
}

// sample is executor i's attested verdict: Miss or OK with a strict
// majority of C, Unknown (no sample) otherwise. Each list adds its power to
// exactly one of ok, miss and unknown, so ok cannot wrap, and total <=
// MaxUint64/2 keeps the doubled sums exact.
func (t *tally) sample(i int) verdict.Verdict {
	e := t.perExec[i]
	unknown := e.unknown + t.wordUnknown[i/32]
	ok := t.listed - e.miss - unknown
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
	t.listed += p
	for next := 0; len(bz) > 0; {
		i, v, rest, err := verdict.NextException(bz, next, n)
		if err != nil {
			return err
		}
		e := &t.perExec[i]
		e.miss += p * isMiss[v]
		e.unknown += p * isUnknown[v]
		bz, next = rest, i+1
	}
	return nil
}

// isMiss and isUnknown weigh a sparse exception (Miss or Unknown) without
// branching.
var (
	isMiss    = [4]uint64{verdict.Miss: 1}
	isUnknown = [4]uint64{verdict.Unknown: 1}
)

// Masks over a word of 32 two-bit verdicts: the low bit of every slot, and
// the word of 32 oks (padding is zero, so a last word of fewer verdicts
// never equals it).
const (
	lowBits      = 0x5555555555555555
	thirtyTwoOKs = uint64(verdict.OK) * lowBits
)

// addPacked tallies one packing of the group with power p, checking it in
// the same pass: a value 3 or set padding bits fail it with verdict.Check's
// error. The words of 32 whole verdicts come first; the last, shorter one
// is masked to the group.
func (t *tally) addPacked(packed []byte, n int, p uint64) error {
	if len(packed) != verdict.PackedLen(n) {
		return verdict.Check(packed, n)
	}
	t.listed += p
	var invalid uint64
	words := n / 32
	for w := range words {
		x := binary.LittleEndian.Uint64(packed[8*w:])
		switch x {
		case thirtyTwoOKs:
			continue
		case 0:
			t.wordUnknown[w] += p
			continue
		}
		invalid |= x & (x >> 1) & lowBits
		t.addWord(x, 32*w, p)
	}
	if rest := n - 32*words; rest > 0 {
		var buf [8]byte
		copy(buf[:], packed[8*words:])
		x := binary.LittleEndian.Uint64(buf[:])
		inGroup := uint64(1)<<(2*rest) - 1
		invalid |= x &^ inGroup // padding must be zero
		x &= inGroup
		invalid |= x & (x >> 1) & lowBits
		t.addWord(x|thirtyTwoOKs&^inGroup, 32*words, p)
	}
	if invalid != 0 {
		return verdict.Check(packed, n)
	}
	return nil
}

// addWord adds power p to the exceptions of a word of 32 verdicts, the
// first of executor base: each set bit of a mask is one exception, found
// with a trailing-zero count. A slot of value 3 (invalid, refused by the
// caller) counts as neither.
func (t *tally) addWord(x uint64, base int, p uint64) {
	hi := x >> 1
	for miss := hi &^ x & lowBits; miss != 0; miss &= miss - 1 {
		t.perExec[base+bits.TrailingZeros64(miss)/2].miss += p
	}
	for unknown := ^(x | hi) & lowBits; unknown != 0; unknown &= unknown - 1 {
		t.perExec[base+bits.TrailingZeros64(unknown)/2].unknown += p
	}
}
