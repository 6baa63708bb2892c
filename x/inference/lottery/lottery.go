// Package lottery draws an index from a list of weights, seeded and
// reproducible: the same weights and seed always give the same index, on
// every machine. It never uses math/rand or the clock.
package lottery

import (
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"math"
	"math/bits"
)

var (
	// ErrEmpty is returned when there is nothing to draw from.
	ErrEmpty = errors.New("no candidates")
	// ErrZeroWeight is returned when every candidate has weight zero.
	ErrZeroWeight = errors.New("total weight is zero")
	// ErrOverflow is returned when the weights do not sum within uint64.
	ErrOverflow = errors.New("total weight overflows uint64")
)

// domain separates the lottery's hash from any other use of the seed.
const domain = "inferenced/executor-lottery/v1"

// maxRejections bounds rejection sampling. A draw is rejected with
// probability below total/2^64, so in practice the first draw is kept; the
// modulo fallback after the bound only matters for absurd totals.
const maxRejections = 8

// Total sums the weights, failing on overflow.
func Total(weights []uint64) (uint64, error) {
	var total uint64
	for _, w := range weights {
		sum, carry := bits.Add64(total, w, 0)
		if carry != 0 {
			return 0, ErrOverflow
		}
		total = sum
	}
	return total, nil
}

// Draw picks index i with probability weights[i]/sum(weights).
func Draw(weights []uint64, seed uint64) (int, error) {
	if len(weights) == 0 {
		return 0, ErrEmpty
	}
	total, err := Total(weights)
	if err != nil {
		return 0, err
	}
	if total == 0 {
		return 0, ErrZeroWeight
	}
	ticket := uniform(seed, total)
	for i, w := range weights {
		if ticket < w {
			return i, nil
		}
		ticket -= w
	}
	// Unreachable: ticket < total = sum(weights).
	return len(weights) - 1, nil
}

// uniform returns a value in [0, n) derived from seed without modulo bias:
// draws at or above the largest multiple of n are rejected and redrawn.
func uniform(seed, n uint64) uint64 {
	limit := math.MaxUint64 - (math.MaxUint64%n+1)%n
	var x uint64
	for counter := uint64(0); counter < maxRejections; counter++ {
		x = draw64(seed, counter)
		if x <= limit {
			break
		}
	}
	return x % n
}

func draw64(seed, counter uint64) uint64 {
	var buf [len(domain) + 16]byte
	copy(buf[:], domain)
	binary.BigEndian.PutUint64(buf[len(domain):], seed)
	binary.BigEndian.PutUint64(buf[len(domain)+8:], counter)
	sum := sha256.Sum256(buf[:])
	return binary.BigEndian.Uint64(sum[:8])
}

// Table is a list of weights prepared for many draws: each Draw is a binary
// search over the running totals instead of a pass over the weights. It
// draws exactly the index Draw draws for the same weights and seed.
type Table struct {
	// cumulative[i] is the sum of weights[0..i].
	cumulative []uint64
}

// NewTable prepares weights, failing as Draw would on them.
func NewTable(weights []uint64) (Table, error) {
	if len(weights) == 0 {
		return Table{}, ErrEmpty
	}
	cumulative := make([]uint64, len(weights))
	var total uint64
	for i, w := range weights {
		sum, carry := bits.Add64(total, w, 0)
		if carry != 0 {
			return Table{}, ErrOverflow
		}
		total = sum
		cumulative[i] = total
	}
	if total == 0 {
		return Table{}, ErrZeroWeight
	}
	return Table{cumulative: cumulative}, nil
}

// Total is the sum of the weights.
func (t Table) Total() uint64 { return t.cumulative[len(t.cumulative)-1] }

// Draw picks index i with probability weights[i]/Total(): the first index
// whose running total exceeds the ticket, which is where Draw's subtraction
// walk stops.
func (t Table) Draw(seed uint64) int {
	ticket := uniform(seed, t.Total())
	lo, hi := 0, len(t.cumulative)-1
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if t.cumulative[mid] > ticket {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return lo
}
