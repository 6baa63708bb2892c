package aggregate

import (
	"encoding/binary"
	"math/bits"

	"github.com/inferenced/inferenced/x/inference/scratch"
	"github.com/inferenced/inferenced/x/inference/verdict"
)

// tally sums, per executor, only the power behind its exceptions (miss and
// unknown); the power behind an ok is what is left of the lists' power.
// Honest lists are mostly oks and are sent sparse: their cost is their
// exceptions'. A list is packed only when about a fifth or more of it is
// exceptions; packings are tallied eight at a time (subsets.go), at a cost
// per word of 32 executors that does not grow with the exceptions.
type tally struct {
	total         uint64   // C: the power of every vote, abstentions included
	listed        uint64   // the power of the votes that carry a list
	miss, unknown []uint64 // per executor
	release       func()   // gives the sums back (kept)
}

// kept is the sums' buffer, kept from one tally to the next (scratch).
var kept scratch.Kept[uint64]

func newTally(n int, total uint64) tally {
	sums, release := kept.Take(2 * n)
	return tally{total: total, miss: sums[:n:n], unknown: sums[n:], release: release}
}

// sample is executor i's attested verdict: Miss or OK with a strict
// majority of C, Unknown (no sample) otherwise. Each list adds its power to
// exactly one of ok, miss and unknown, so ok cannot wrap, and total <=
// MaxUint64/2 keeps the doubled sums exact.
func (t *tally) sample(i int) verdict.Verdict {
	miss := t.miss[i]
	return t.decide(miss, t.listed-miss-t.unknown[i])
}

// decide is the verdict of an executor with miss and ok power behind it.
func (t *tally) decide(miss, ok uint64) verdict.Verdict {
	switch {
	case 2*miss > t.total:
		return verdict.Miss
	case 2*ok > t.total:
		return verdict.OK
	}
	return verdict.Unknown
}

// sampleAgainst is sample for lists relative to a reference whose verdict
// at executor i is r: the power of each relative verdict belongs to the
// absolute verdict it stands for (verdict.AbsoluteOf, written out:
// against a miss, a relative ok is a miss and a relative unknown an ok;
// against an unknown, a relative unknown is a miss and a relative miss an
// ok).
func (t *tally) sampleAgainst(i int, r verdict.Verdict) verdict.Verdict {
	miss, unknown := t.miss[i], t.unknown[i]
	ok := t.listed - miss - unknown
	switch r {
	case verdict.Miss:
		miss, ok = ok, unknown
	case verdict.Unknown:
		miss, ok = unknown, miss
	}
	return t.decide(miss, ok)
}

// addSparse tallies one sparse list of the group with power p, or fails
// as verdict.Exceptions does.
func (t *tally) addSparse(bz []byte, n int, p uint64) error {
	t.listed += p
	return verdict.AddSparse(bz, n, p, t.miss, t.unknown)
}

// Masks over a word of 32 two-bit verdicts (eight bytes of a packing, read
// little-endian): the low bit of every slot, and 32 oks.
const (
	lowBits      = 0x5555555555555555
	thirtyTwoOKs = uint64(verdict.OK) * lowBits
)

// missBits, unknownBits and invalidBits mark, at the low bit of each slot
// of a word, the verdicts of value 2, 0 and 3.
func missBits(x uint64) uint64    { return (x >> 1) &^ x & lowBits }
func unknownBits(x uint64) uint64 { return ^(x | x>>1) & lowBits }
func invalidBits(x uint64) uint64 { return x & (x >> 1) & lowBits }

// lastWord is the last, partial word of a packing of n verdicts (when n is
// not a multiple of 32): its slots past the group read as oks, so they add
// nothing, and bad marks set padding bits or a value 3.
func lastWord(packed []byte, n int) (x, bad uint64) {
	full := n / 32
	var buf [8]byte
	copy(buf[:], packed[8*full:])
	x = binary.LittleEndian.Uint64(buf[:])
	inGroup := uint64(1)<<(2*(n-32*full)) - 1
	return x&inGroup | thirtyTwoOKs&^inGroup, x&^inGroup | invalidBits(x)
}

// addWord adds power p to the exceptions of one word of verdicts whose
// first is executor base, one at a time: each set bit of a mask is one
// exception, found with a trailing-zero count.
func (t *tally) addWord(x uint64, base int, p uint64) {
	for m := missBits(x); m != 0; m &= m - 1 {
		t.miss[base+bits.TrailingZeros64(m)/2] += p
	}
	for m := unknownBits(x); m != 0; m &= m - 1 {
		t.unknown[base+bits.TrailingZeros64(m)/2] += p
	}
}
