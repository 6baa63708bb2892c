// Package verdict packs validators' per-executor health verdicts at two bits
// each, in epoch-group order, and unpacks them strictly: one encoding per
// verdict list, so equal lists always have equal bytes.
package verdict

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// Verdict is what a validator saw of one executor.
type Verdict uint8

const (
	// Unknown: no fresh observation (abstains on this executor).
	Unknown Verdict = 0
	OK      Verdict = 1
	Miss    Verdict = 2
	// invalid is the one 2-bit value no encoder produces.
	invalid Verdict = 3
)

func (v Verdict) String() string {
	switch v {
	case Unknown:
		return "unknown"
	case OK:
		return "ok"
	case Miss:
		return "miss"
	}
	return fmt.Sprintf("Verdict(%d)", uint8(v))
}

// PackedLen is the length of the packing of n verdicts.
func PackedLen(n int) int { return (n + 3) / 4 }

// Pack encodes verdicts four per byte, the first in the lowest bits.
func Pack(vs []Verdict) ([]byte, error) {
	out := make([]byte, PackedLen(len(vs)))
	for i, v := range vs {
		if v > Miss {
			return nil, fmt.Errorf("verdict %d: %s is not encodable", i, v)
		}
		out[i/4] |= byte(v) << (2 * (i % 4))
	}
	return out, nil
}

// ErrLength is returned when the packing does not fit the group size.
var ErrLength = errors.New("verdicts do not match the epoch group size")

// At returns verdict i of a packing of n verdicts that Check accepted.
func At(packed []byte, i int) Verdict {
	return Verdict(packed[i/4] >> (2 * (i % 4)) & 3)
}

// Check accepts a packing of exactly n verdicts: the right length, no
// invalid value, and zero padding after the last verdict.
func Check(packed []byte, n int) error {
	if n < 0 || len(packed) != PackedLen(n) {
		return fmt.Errorf("%w: %d bytes for %d executors", ErrLength, len(packed), n)
	}
	if i := firstInvalid(packed); i >= 0 {
		return fmt.Errorf("executor %d: invalid verdict value 3", i)
	}
	if rem := n % 4; rem != 0 && packed[len(packed)-1]>>(2*rem) != 0 {
		return errors.New("non-zero padding after the last verdict")
	}
	return nil
}

// Unpack decodes a packing of exactly n verdicts.
func Unpack(packed []byte, n int) ([]Verdict, error) {
	if err := Check(packed, n); err != nil {
		return nil, err
	}
	out := make([]Verdict, n)
	for i := range out {
		out[i] = At(packed, i)
	}
	return out, nil
}

// firstInvalid returns the index of the first verdict of value 3 (both of
// its bits set), or -1. Valid packings, the common case, are scanned eight
// bytes at a time; the slow path only runs to name the culprit.
func firstInvalid(packed []byte) int {
	const low = 0x5555555555555555
	var both uint64
	j := 0
	for ; j+8 <= len(packed); j += 8 {
		w := binary.LittleEndian.Uint64(packed[j:])
		both |= w & (w >> 1) & low
	}
	for ; j < len(packed); j++ {
		both |= uint64(packed[j] & (packed[j] >> 1) & 0x55)
	}
	if both == 0 {
		return -1
	}
	for j, b := range packed {
		if bits := b & (b >> 1) & 0x55; bits != 0 {
			for k := 0; k < 4; k++ {
				if bits>>(2*k)&1 != 0 {
					return 4*j + k
				}
			}
		}
	}
	return -1
}
