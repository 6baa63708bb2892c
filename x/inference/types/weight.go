package types

import (
	"math"
	"math/bits"
)

// AddWeight adds two selection weights, saturating at the largest uint64
// instead of wrapping: a total of weights is only ever compared, and a
// wrapped sum would make a large group look small.
func AddWeight(a, b uint64) uint64 {
	sum, carry := bits.Add64(a, b, 0)
	if carry != 0 {
		return math.MaxUint64
	}
	return sum
}
