package breakerstore

import (
	"encoding/binary"
	"math/bits"

	"github.com/inferenced/inferenced/x/inference/service"
)

// A block's attestation names every member of a group of up to 50,000,
// but the step holds few of them and the samples carry few misses and
// few rates above 0%: the scans below skip runs without any, a word at a
// time, so that mapping a block costs what it carries, not the group's
// size. Each visits exactly the indices its naive loop would
// (TestScansVisitWhatTheNaiveLoopsVisit).

// splitAttested reads the samples packed (verdict.Pack of members) a word
// of 32 at a time and splits what the step maps: it calls visit, in
// increasing order, with every index to map one by one (a miss of a
// member that held does not hold or queued holds, an ok of one that
// either holds), and returns the misses of the members held holds and
// queued does not (heldMisses: a quiet one's is only carried by the
// streaks item, which the step does in bulk). It stops at visit's first
// error. Runs without any of these cost a few operations each.
func splitAttested(packed []byte, members int, held, queued bitmap, visit func(i uint32, miss bool) error) (heldMisses bitmap, err error) {
	for k := uint32(0); 32*k < uint32(members); k++ {
		w := packedWord(packed, k)
		miss, ok := slotMask(missBits(w)>>1), slotMask(okBits(w))
		h, q := held.word32(k), queued.word32(k)
		bulk := miss & h &^ q
		one := miss&^bulk | ok&(h|q)
		if bulk != 0 {
			for len(heldMisses) < int(4*k) {
				heldMisses = append(heldMisses, 0)
			}
			heldMisses = append(heldMisses, byte(bulk), byte(bulk>>8), byte(bulk>>16), byte(bulk>>24))
		}
		for ; one != 0; one &= one - 1 {
			j := uint32(bits.TrailingZeros32(one))
			if err := visit(32*k+j, miss>>j&1 != 0); err != nil {
				return nil, err
			}
		}
	}
	return heldMisses.trimmed(), nil
}

// packedWord is the k-th word of 32 packed verdicts, read little-endian;
// slots past the packing read as unknown (00), as its padding does.
func packedWord(packed []byte, k uint32) uint64 {
	if int(8*k+8) <= len(packed) {
		return binary.LittleEndian.Uint64(packed[8*k:])
	}
	var tail [8]byte
	copy(tail[:], packed[8*k:])
	return binary.LittleEndian.Uint64(tail[:])
}

// missBits marks the misses (10) of 32 packed verdicts at the high bit of
// each slot; okBits the oks (01) at the low bit.
func missBits(w uint64) uint64 {
	const high = 0xAAAA_AAAA_AAAA_AAAA
	return (w &^ (w << 1)) & high
}

func okBits(w uint64) uint64 {
	const low = 0x5555_5555_5555_5555
	return (w &^ (w >> 1)) & low
}

// slotMask packs the low bits of the 32 slots of x (x has no other bit
// set) into a word, slot j at bit j.
func slotMask(x uint64) uint32 {
	x = (x | x>>1) & 0x3333_3333_3333_3333
	x = (x | x>>2) & 0x0F0F_0F0F_0F0F_0F0F
	x = (x | x>>4) & 0x00FF_00FF_00FF_00FF
	x = (x | x>>8) & 0x0000_FFFF_0000_FFFF
	return uint32(x | x>>16)
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
