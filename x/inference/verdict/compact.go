package verdict

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"
	"slices"
)

// The compact encoding of a list of n verdicts, the one form vote
// extensions and health bundles carry, is the shorter of two forms, told
// apart by length alone:
//
//   - packed: exactly PackedLen(n) bytes, as Pack writes them;
//   - sparse: fewer than PackedLen(n) bytes, the list's exceptions (every
//     verdict that is not OK) in increasing index order, each one minimal
//     uvarint gap<<1 | miss, where gap is the number of OKs skipped since
//     the previous exception (or the start) and miss is 1 for Miss, 0 for
//     Unknown. An all-OK list is the empty string.
//
// The sparse form is used exactly when it is strictly shorter than the
// packed one, so every list has one encoding and no input is ever longer
// than its packing: a decoder bounds its input by PackedLen(n) before any
// work, and its output size is fixed by n.

var (
	ErrOversized    = errors.New("verdict list longer than its packing")
	ErrSparse       = errors.New("malformed sparse verdict list")
	ErrNonCanonical = errors.New("verdict list is packed although its sparse form is shorter")
)

// IsSparse reports whether bz, a compact list of n verdicts, is in the
// sparse form.
func IsSparse(bz []byte, n int) bool { return len(bz) < PackedLen(n) }

// Compact encodes a packing of n verdicts (checked as Check does) in its
// canonical compact form. The result never aliases packed.
func Compact(packed []byte, n int) ([]byte, error) {
	if err := Check(packed, n); err != nil {
		return nil, err
	}
	limit := PackedLen(n)
	if sparseLen(packed, n, limit) >= limit {
		return slices.Clone(packed), nil
	}
	out := make([]byte, 0, limit)
	next := 0
	eachException(packed, n, func(i int, v Verdict) {
		out = binary.AppendUvarint(out, exceptionCode(i-next, v))
		next = i + 1
	})
	return out, nil
}

// CheckCompact accepts exactly the canonical compact encoding of n
// verdicts: not longer than the packing, a valid packing only when the
// sparse form would not be shorter, a well-formed sparse form otherwise.
// It does not allocate.
func CheckCompact(bz []byte, n int) error {
	if n >= 0 && len(bz) == PackedLen(n) {
		return checkCanonicalPacking(bz, n)
	}
	return checkEither(bz, n)
}

// checkCanonicalPacking is CheckCompact of a packing of n (n >= 0): valid
// (Check, whose errors it returns), and canonical, that is not longer than
// its sparse form. Each exception takes at least a byte: a packing with as
// many exceptions as bytes is canonical without measuring its sparse form.
func checkCanonicalPacking(packed []byte, n int) error {
	exceptions, valid := countExceptions(packed, n)
	if !valid {
		return Check(packed, n)
	}
	if exceptions < len(packed) && sparseLen(packed, n, len(packed)) < len(packed) {
		return ErrNonCanonical
	}
	return nil
}

// countExceptions is the number of verdicts that are not OK in a packing
// of n, eight bytes at a time, and whether the packing is valid (no
// verdict of value 3, zero padding: Check), in the same pass.
func countExceptions(packed []byte, n int) (count int, valid bool) {
	const low = 0x5555555555555555
	var both uint64
	j := 0
	for ; j+8 <= len(packed); j += 8 {
		w := binary.LittleEndian.Uint64(packed[j:])
		both |= w & (w >> 1) & low
		x := w ^ thirtyTwoOKs // 00 where OK
		count += bits.OnesCount64((x | x>>1) & low)
	}
	for ; j < len(packed); j++ {
		both |= uint64(packed[j] & (packed[j] >> 1) & 0x55)
		x := packed[j] ^ fourOKs
		count += bits.OnesCount8((x | x>>1) & 0x55)
	}
	// The padding (zero, so not OK) after the last verdict is no exception.
	if rem := n % 4; rem != 0 {
		if packed[len(packed)-1]>>(2*rem) != 0 {
			return 0, false
		}
		count -= 4 - rem
	}
	return count, both == 0
}

// checkEither accepts a compact list of n verdicts in either form, whether
// or not it is the canonical choice: what the tally needs to read it.
func checkEither(bz []byte, n int) error {
	if n < 0 {
		return fmt.Errorf("%w: %d executors", ErrLength, n)
	}
	if len(bz) > PackedLen(n) {
		return fmt.Errorf("%w: %d bytes for %d executors", ErrOversized, len(bz), n)
	}
	if !IsSparse(bz, n) {
		return Check(bz, n)
	}
	if sparseScan(bz, n, nil, nil, 0) {
		return nil
	}
	return Exceptions(bz, n, nil)
}

// Expand decodes the canonical compact encoding of n verdicts to their
// packing.
func Expand(bz []byte, n int) ([]byte, error) {
	if err := CheckCompact(bz, n); err != nil {
		return nil, err
	}
	if !IsSparse(bz, n) {
		return slices.Clone(bz), nil
	}
	out := make([]byte, PackedLen(n))
	for j := range out {
		out[j] = fourOKs
	}
	if rem := n % 4; rem != 0 {
		out[len(out)-1] = fourOKs >> (2 * (4 - rem))
	}
	// Checked above: cannot fail.
	_ = Exceptions(bz, n, func(i int, v Verdict) {
		out[i/4] &^= 3 << (2 * (i % 4))
		out[i/4] |= byte(v) << (2 * (i % 4))
	})
	return out, nil
}

// Exceptions reads a sparse list of n verdicts (IsSparse) and calls visit,
// when not nil, with each exception in increasing index order. It fails on
// a truncated or non-minimal varint, an index at or past n, and input that
// is not shorter than the packing. visit may have seen the exceptions
// before a failure: check first (checkEither) when that matters.
func Exceptions(bz []byte, n int, visit func(i int, v Verdict)) error {
	if !IsSparse(bz, n) {
		return fmt.Errorf("%w: %d bytes is not shorter than the packing of %d", ErrSparse, len(bz), n)
	}
	next := 0
	for len(bz) > 0 {
		i, v, rest, err := NextException(bz, next, n)
		if err != nil {
			return err
		}
		if visit != nil {
			visit(i, v)
		}
		bz, next = rest, i+1
	}
	return nil
}

// NextException reads the first exception of bz, the rest of a sparse list
// of n whose next exception is at index next or later, and returns it with
// what follows it. A loop over it (next = i+1, bz = rest, until bz is
// empty) reads what Exceptions reads, without a call per exception.
func NextException(bz []byte, next, n int) (i int, v Verdict, rest []byte, err error) {
	var c uint64
	var k int
	if len(bz) > 0 && bz[0] < 0x80 { // most gaps are under 64: one byte
		c, k = uint64(bz[0]), 1
	} else if c, k = binary.Uvarint(bz); k <= 0 || (k > 1 && bz[k-1] == 0) {
		return 0, 0, nil, fmt.Errorf("%w: bad varint at index %d", ErrSparse, next)
	}
	gap := c >> 1
	if next < 0 || gap >= uint64(n-next) || next >= n {
		return 0, 0, nil, fmt.Errorf("%w: exception past executor %d of %d", ErrSparse, next, n)
	}
	return next + int(gap), exceptionVerdict(c), bz[k:], nil
}

func exceptionCode(gap int, v Verdict) uint64 {
	c := uint64(gap) << 1
	if v == Miss {
		c |= 1
	}
	return c
}

func exceptionVerdict(c uint64) Verdict {
	if c&1 != 0 {
		return Miss
	}
	return Unknown
}

// fourOKs is a byte of four OK verdicts; thirtyTwoOKs eight of them.
const (
	fourOKs      = byte(OK | OK<<2 | OK<<4 | OK<<6)
	thirtyTwoOKs = uint64(fourOKs) * 0x0101010101010101
)

// eachException calls visit with every verdict of a checked packing that
// is not OK, in index order, skipping words of 32 OKs and bytes of 4.
func eachException(packed []byte, n int, visit func(i int, v Verdict)) {
	j := 0
	for ; j+8 <= len(packed); j += 8 {
		if binary.LittleEndian.Uint64(packed[j:]) == thirtyTwoOKs {
			continue
		}
		for k := j; k < j+8; k++ {
			exceptionsOfByte(packed[k], k, n, visit)
		}
	}
	for ; j < len(packed); j++ {
		exceptionsOfByte(packed[j], j, n, visit)
	}
}

func exceptionsOfByte(b byte, j, n int, visit func(i int, v Verdict)) {
	if b == fourOKs {
		return
	}
	for k := 0; k < 4 && 4*j+k < n; k++ {
		if v := Verdict(b >> (2 * k) & 3); v != OK {
			visit(4*j+k, v)
		}
	}
}

// sparseLen is the length of the sparse form of a checked packing of n
// verdicts, or any value >= limit once it reaches limit.
func sparseLen(packed []byte, n, limit int) int {
	size, next := 0, 0
	j := 0
	for ; j+8 <= len(packed) && size < limit; j += 8 {
		if binary.LittleEndian.Uint64(packed[j:]) == thirtyTwoOKs {
			continue
		}
		for k := j; k < j+8; k++ {
			size, next = sparseLenOfByte(packed[k], k, n, size, next)
		}
	}
	for ; j < len(packed) && size < limit; j++ {
		size, next = sparseLenOfByte(packed[j], j, n, size, next)
	}
	return size
}

func sparseLenOfByte(b byte, j, n, size, next int) (int, int) {
	if b == fourOKs {
		return size, next
	}
	for k := 0; k < 4 && 4*j+k < n; k++ {
		if v := Verdict(b >> (2 * k) & 3); v != OK {
			i := 4*j + k
			size += uvarintLen(exceptionCode(i-next, v))
			next = i + 1
		}
	}
	return size, next
}

func uvarintLen(v uint64) int {
	n := 1
	for v >= 0x80 {
		v >>= 7
		n++
	}
	return n
}
