package breakerstore

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"
)

// bitmap is a set of group indices, bit i of byte i/8 for index i. It is
// kept canonical: no trailing zero byte, so the empty set is nil and one
// set has one encoding.
type bitmap []byte

// has reports whether index i is in the set.
func (b bitmap) has(i uint32) bool {
	n := i / 8
	return int(n) < len(b) && b[n]&(1<<(i%8)) != 0
}

// byteAt is the indices 8n..8n+7 of b as the bits of a byte (0 past its
// end).
func (b bitmap) byteAt(n uint32) byte {
	if int(n) < len(b) {
		return b[n]
	}
	return 0
}

// word32 is the indices 32k..32k+31 of b as the bits of a word, the
// lowest first.
func (b bitmap) word32(k uint32) uint32 {
	n := 4 * k
	return uint32(b.byteAt(n)) | uint32(b.byteAt(n+1))<<8 | uint32(b.byteAt(n+2))<<16 | uint32(b.byteAt(n+3))<<24
}

// with is b with i added (b's bytes may be reused).
func (b bitmap) with(i uint32) bitmap {
	n := int(i / 8)
	for len(b) <= n {
		b = append(b, 0)
	}
	b[n] |= 1 << (i % 8)
	return b
}

// without is b without i (b's bytes may be reused), canonical.
func (b bitmap) without(i uint32) bitmap {
	if n := int(i / 8); n < len(b) {
		b[n] &^= 1 << (i % 8)
	}
	return b.trimmed()
}

func (b bitmap) trimmed() bitmap {
	for len(b) > 0 && b[len(b)-1] == 0 {
		b = b[:len(b)-1]
	}
	if len(b) == 0 {
		return nil
	}
	return b
}

// minus is the indices of b not in o, as a new set.
func (b bitmap) minus(o bitmap) bitmap {
	out := make(bitmap, len(b))
	for n := range b {
		out[n] = b[n]
		if n < len(o) {
			out[n] &^= o[n]
		}
	}
	return out.trimmed()
}

// subsetOf reports whether every index of b is in o.
func (b bitmap) subsetOf(o bitmap) bool {
	for n := range b {
		if n >= len(o) || b[n]&^o[n] != 0 {
			return false
		}
	}
	return true
}

// each calls visit with every index of b, in increasing order.
func (b bitmap) each(visit func(uint32) error) error {
	for n, x := range b {
		for x != 0 {
			i := uint32(n)*8 + uint32(bits.TrailingZeros8(x))
			if err := visit(i); err != nil {
				return err
			}
			x &= x - 1
		}
	}
	return nil
}

// maxBitmapBytes bounds a stored bitmap: one bit per group index, and a
// group index is a uint32 (the group itself is far smaller: the decoder
// only rules out lengths no group can have).
const maxBitmapBytes = 1 << 29

// appendBitmap writes b as a big-endian uint32 length and its bytes.
func appendBitmap(out []byte, b bitmap) []byte {
	out = binary.BigEndian.AppendUint32(out, uint32(len(b)))
	return append(out, b...)
}

// readBitmap reads one bitmap written by appendBitmap from the front of
// in, strictly: its length must fit in in and the bitmap be canonical.
func readBitmap(in []byte) (bitmap, []byte, error) {
	if len(in) < 4 {
		return nil, nil, errors.New("bitmap length cut short")
	}
	n := binary.BigEndian.Uint32(in)
	in = in[4:]
	if n > maxBitmapBytes || uint64(n) > uint64(len(in)) {
		return nil, nil, fmt.Errorf("bitmap of %d bytes, %d left", n, len(in))
	}
	if n == 0 {
		return nil, in, nil
	}
	b := bitmap(append([]byte(nil), in[:n]...))
	if b[n-1] == 0 {
		return nil, nil, errors.New("bitmap ends in a zero byte (not canonical)")
	}
	return b, in[n:], nil
}

// union is the indices of b or o, as a new set.
func (b bitmap) union(o bitmap) bitmap {
	if len(o) > len(b) {
		b, o = o, b
	}
	out := append(bitmap(nil), b...)
	for n := range o {
		out[n] |= o[n]
	}
	return out.trimmed()
}
