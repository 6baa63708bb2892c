package breakerstore

import (
	"encoding/binary"

	"github.com/inferenced/inferenced/x/inference/service"
	"github.com/inferenced/inferenced/x/inference/verdict"
)

// A block's attestation names every member of a group of up to 50,000,
// but the step holds few of them and the samples carry few misses and
// few rates above 0%: the scans below skip runs without any, a word at a
// time, so that mapping a block costs what it carries, not the group's
// size. Each visits exactly the indices its naive loop would
// (TestScansVisitWhatTheNaiveLoopsVisit).

// eachMissOrIn calls visit, in increasing order, with every index i below
// members whose verdict in packed (verdict.Pack of members) is a miss or
// that in holds, and stops at visit's first error. packed must be
// verdict.PackedLen(members) bytes.
func eachMissOrIn(packed []byte, members int, in bitmap, visit func(uint32) error) error {
	for k := uint32(0); 32*k < uint32(members); k++ {
		from, to := 32*k, min(32*k+32, uint32(members))
		if to-from == 32 && !hasMiss(binary.LittleEndian.Uint64(packed[8*k:])) && in.word32(k) == 0 {
			continue
		}
		for i := from; i < to; i++ {
			if verdict.At(packed, int(i)) != verdict.Miss && !in.has(i) {
				continue
			}
			if err := visit(i); err != nil {
				return err
			}
		}
	}
	return nil
}

// hasMiss reports whether any of the 32 packed verdicts of w (verdict.Pack,
// read little-endian) is a miss: its high bit set and its low bit clear.
func hasMiss(w uint64) bool {
	const high = 0xAAAA_AAAA_AAAA_AAAA
	return (w&^(w<<1))&high != 0
}

// eachRatedOrIn calls visit, in increasing order, with every index i of
// rates whose report is not 0% (a rate above it, or unknown) or that in
// holds, and stops at visit's first error.
func eachRatedOrIn(rates []service.Report, in bitmap, visit func(uint32) error) error {
	for from := 0; from < len(rates); from += 8 {
		to := min(from+8, len(rates))
		if to-from == 8 && in.byteAt(uint32(from/8)) == 0 && allZero(rates[from:to]) {
			continue
		}
		for i := from; i < to; i++ {
			if rates[i] == 0 && !in.has(uint32(i)) {
				continue
			}
			if err := visit(uint32(i)); err != nil {
				return err
			}
		}
	}
	return nil
}

// allZero reports whether every rate of rs is 0%.
func allZero(rs []service.Report) bool {
	var or service.Report
	for _, r := range rs {
		or |= r
	}
	return or == 0
}
