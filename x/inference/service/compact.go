package service

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// The encoding of a list of n reports, the one form vote extensions and
// health bundles carry:
//
//   - the empty string when every report is Unknown (the field is then
//     absent: a validator without canaries abstains on service);
//   - otherwise the marker byte 0x00, then the exceptions (every report that
//     is not 0%) in increasing index order, each a minimal uvarint
//     gap<<1 | unknown, where gap is the number of 0% reports skipped since
//     the previous exception (or the start), followed, when unknown is 0,
//     by one byte of the rate in 1..MaxRate.
//
// Nothing can be written twice: gaps count from the index after the
// previous exception, a 0% rate is never an exception, the varints are
// minimal, and a list that is all Unknown has only the empty form. A list
// holds at most MaxExceptions exceptions (Clamp makes any list fit), so it
// is at most MaxLen(n) bytes: each exception covers its gap and its
// executor, a gap of g takes at most g+1 bytes, and at most 3 for a group
// of max_participants' cap (50,000).

// MaxExceptions bounds the reports of a list that are not 0%. An honest
// monitor reports its excess over its own median executor (Relative), so
// its lists hold the few executors that stand out; the bound keeps the
// health bundle of 300 validators' largest extensions for the largest
// group within its 4 MiB (abci/proposals TestWorstCaseBundleFits).
const MaxExceptions = 256

// maxExceptionLen is the longest exception: a 3-byte gap and a rate.
const maxExceptionLen = 4

// MaxLen bounds the encoding of n reports: the marker, and at most two
// bytes per executor and four per exception.
func MaxLen(n int) int {
	if n <= 0 {
		return 0
	}
	return 1 + min(2*n, maxExceptionLen*MaxExceptions)
}

const marker = 0x00

var (
	ErrOversized    = errors.New("service report list longer than its bound")
	ErrMalformed    = errors.New("malformed service report list")
	ErrNonCanonical = errors.New("service report list is not canonically encoded")
	ErrLength       = errors.New("service reports do not match the epoch group size")
)

// Encode returns the canonical encoding of reports (one per executor):
// nothing when none is known, and an error when more than MaxExceptions
// are not 0% (Clamp first).
func Encode(reports []Report) ([]byte, error) {
	known := false
	for i, r := range reports {
		if r != Unknown && !r.Known() {
			return nil, fmt.Errorf("executor %d: %s is not encodable", i, r)
		}
		known = known || r.Known()
	}
	if !known {
		return nil, nil
	}
	out := make([]byte, 1, MaxLen(len(reports)))
	next, exceptions := 0, 0
	for i, r := range reports {
		if r == 0 {
			continue
		}
		if exceptions++; exceptions > MaxExceptions {
			return nil, fmt.Errorf("%w: more than %d reports are not 0%% (Clamp the list first)", ErrOversized, MaxExceptions)
		}
		out = appendException(out, i-next, r)
		next = i + 1
	}
	return out, nil
}

func appendException(out []byte, gap int, r Report) []byte {
	if r == Unknown {
		return binary.AppendUvarint(out, uint64(gap)<<1|1)
	}
	return append(binary.AppendUvarint(out, uint64(gap)<<1), byte(r))
}

// Check accepts exactly the canonical encoding of n reports. It does not
// allocate.
func Check(bz []byte, n int) error {
	if len(bz) == 0 {
		if n < 0 {
			return fmt.Errorf("%w: %d executors", ErrLength, n)
		}
		return nil
	}
	if unknowns, _, ok := scan(bz, n, sink{}); ok && unknowns != n {
		return nil
	}
	return checkEach(bz, n)
}

// checkEach is Check through Each: the reference scan agrees with
// (TestScanAgreesWithEach, FuzzScanAgreesWithEach), and the wording of
// every refusal.
func checkEach(bz []byte, n int) error {
	unknowns := 0
	err := Each(bz, n, func(_ int, r Report) {
		if r == Unknown {
			unknowns++
		}
	})
	if err != nil {
		return err
	}
	if unknowns == n {
		return fmt.Errorf("%w: a list of only unknowns is the empty string", ErrNonCanonical)
	}
	return nil
}

// Each reads an encoded list of n reports and calls visit, when not nil,
// with each exception (every report that is not 0%) in increasing index
// order; the empty list calls it with every index, Unknown. It fails on
// input over MaxLen(n), a wrong marker, a truncated or non-minimal varint,
// an index at or past n, and a rate outside 1..MaxRate; visit may have
// seen exceptions before a failure (Check first when that matters). An
// all-unknown list written with the marker passes Each but not Check.
func Each(bz []byte, n int, visit func(i int, r Report)) error {
	if n < 0 {
		return fmt.Errorf("%w: %d executors", ErrLength, n)
	}
	if len(bz) == 0 {
		for i := 0; visit != nil && i < n; i++ {
			visit(i, Unknown)
		}
		return nil
	}
	if len(bz) > MaxLen(n) {
		return fmt.Errorf("%w: %d bytes for %d executors", ErrOversized, len(bz), n)
	}
	if bz[0] != marker {
		return fmt.Errorf("%w: first byte %#x, want %#x", ErrMalformed, bz[0], marker)
	}
	bz = bz[1:]
	for next, count := 0, 0; len(bz) > 0; count++ {
		if count == MaxExceptions {
			return fmt.Errorf("%w: more than %d exceptions", ErrOversized, MaxExceptions)
		}
		i, r, rest, ok := nextShort(bz, next, n)
		if !ok {
			var err error
			if i, r, rest, err = NextException(bz, next, n); err != nil {
				return err
			}
		}
		if visit != nil {
			visit(i, r)
		}
		bz, next = rest, i+1
	}
	return nil
}

// nextShort is NextException for the common exception, a gap of one or
// two varint bytes followed by its rate if any, small enough to be
// inlined into Each's loop (every block reads every validator's list two
// or three times); ok is false for anything else, valid or not, which
// NextException then reads and judges.
func nextShort(bz []byte, next, n int) (i int, r Report, rest []byte, ok bool) {
	c, k := uint(bz[0]), 1
	if c >= 0x80 {
		if len(bz) < 2 || bz[1] == 0 || bz[1] >= 0x80 {
			return 0, 0, nil, false
		}
		c, k = c&0x7f|uint(bz[1])<<7, 2
	}
	if c>>1 >= uint(n-next) {
		return 0, 0, nil, false
	}
	i, bz = next+int(c>>1), bz[k:]
	if c&1 == 1 {
		return i, Unknown, bz, true
	}
	if len(bz) == 0 || bz[0] == 0 || Report(bz[0]) > MaxRate {
		return 0, 0, nil, false
	}
	return i, Report(bz[0]), bz[1:], true
}

// NextException reads the first exception of bz, the rest of a list of n
// (after its marker) whose next exception is at index next or later, and
// returns it with what follows it.
func NextException(bz []byte, next, n int) (i int, r Report, rest []byte, err error) {
	var c uint64
	var k int
	if len(bz) > 0 && bz[0] < 0x80 { // most gaps are under 64: one byte
		c, k = uint64(bz[0]), 1
	} else if c, k = binary.Uvarint(bz); k <= 0 || (k > 1 && bz[k-1] == 0) {
		return 0, 0, nil, fmt.Errorf("%w: bad varint at index %d", ErrMalformed, next)
	}
	gap := c >> 1
	if next < 0 || next >= n || gap >= uint64(n-next) {
		return 0, 0, nil, fmt.Errorf("%w: exception past executor %d of %d", ErrMalformed, next, n)
	}
	i, bz = next+int(gap), bz[k:]
	if c&1 == 1 {
		return i, Unknown, bz, nil
	}
	if len(bz) == 0 || bz[0] == 0 || Report(bz[0]) > MaxRate {
		return 0, 0, nil, fmt.Errorf("%w: executor %d: rate missing or outside 1..%d", ErrMalformed, i, MaxRate)
	}
	return i, Report(bz[0]), bz[1:], nil
}

// Decode returns the n reports of a canonical encoding.
func Decode(bz []byte, n int) ([]Report, error) {
	if err := Check(bz, n); err != nil {
		return nil, err
	}
	out := make([]Report, n)
	if len(bz) == 0 {
		for i := range out {
			out[i] = Unknown
		}
		return out, nil
	}
	// Checked above: cannot fail.
	_ = Each(bz, n, func(i int, r Report) { out[i] = r })
	return out, nil
}
