package sprt

import (
	"errors"

	"cosmossdk.io/math"
)

// maxSeriesTerms bounds the atanh series; with the argument reduced below 1/3
// the terms reach zero at 18 decimals well before this.
const maxSeriesTerms = 64

var (
	errNonPositive = errors.New("ln of a non-positive number")
	two            = math.LegacyNewDec(2)
	one            = math.LegacyOneDec()
)

// Ln is the natural logarithm in fixed 18-decimal arithmetic. It is
// deterministic on every machine: only integer operations are involved.
func Ln(x math.LegacyDec) (math.LegacyDec, error) {
	if x.IsNil() || !x.IsPositive() {
		return math.LegacyDec{}, errNonPositive
	}
	// Reduce x into [1, 2) as x = m * 2^k.
	k := int64(0)
	m := x
	for m.GTE(two) {
		m = m.QuoInt64(2)
		k++
	}
	for m.LT(one) {
		m = m.MulInt64(2)
		k--
	}
	lnM := lnNearOne(m)
	if k == 0 {
		return lnM, nil
	}
	return lnM.Add(lnNearOne(two).MulInt64(k)), nil
}

// lnNearOne computes ln(m) for m in [1, 2] with ln(m) = 2*atanh(z),
// z = (m-1)/(m+1) <= 1/3, summing z^(2n+1)/(2n+1) until the terms vanish.
func lnNearOne(m math.LegacyDec) math.LegacyDec {
	z := m.Sub(one).Quo(m.Add(one))
	z2 := z.Mul(z)
	power := z
	sum := math.LegacyZeroDec()
	for n := int64(0); n < maxSeriesTerms; n++ {
		term := power.QuoInt64(2*n + 1)
		if term.IsZero() {
			break
		}
		sum = sum.Add(term)
		power = power.Mul(z2)
	}
	return sum.MulInt64(2)
}
