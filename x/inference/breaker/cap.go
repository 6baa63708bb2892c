package breaker

import "math/bits"

// WithinCap reports whether excluding an executor of weight w keeps the
// excluded weight of a model within pct percent of its total weight:
// (excluded + w) * 100 <= pct * total, computed without overflow.
func WithinCap(excluded, w, total uint64, pct uint32) bool {
	sum, carry := bits.Add64(excluded, w, 0)
	lhsHi, lhsLo := bits.Mul64(sum, 100)
	lhsHi += carry * 100 // (2^64 * carry) * 100 lands in the high word
	rhsHi, rhsLo := bits.Mul64(total, uint64(pct))
	return lhsHi < rhsHi || (lhsHi == rhsHi && lhsLo <= rhsLo)
}
