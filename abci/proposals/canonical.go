package proposals

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"

	"github.com/inferenced/inferenced/x/inference/types"
)

// readBundle reads the HealthBundle message of a bundle, refusing any body
// that gogoproto's codec would not write back byte for byte. Canonical
// bodies, every bundle a proposer builds, are read by hand (readCanonical):
// no copy per field, no re-encoding to compare. Any other body goes through
// the codec and its re-encoding check as it always did, so refusals and
// their errors are the codec's (FuzzReadCanonicalAgrees).
func readBundle(body []byte) (types.HealthBundle, error) {
	if hb, ok := readCanonical(body); ok {
		return hb, nil
	}
	return readGogo(body)
}

// readGogo is the codec's path: decode, then encode again and compare.
func readGogo(body []byte) (types.HealthBundle, error) {
	var hb types.HealthBundle
	if err := hb.Unmarshal(body); err != nil {
		return types.HealthBundle{}, fmt.Errorf("%w: %v", ErrBadBundle, err)
	}
	if again, err := hb.Marshal(); err != nil || !bytes.Equal(again, body) {
		return types.HealthBundle{}, ErrNonCanonical
	}
	return hb, nil
}

// readCanonical reads body when it is exactly what HealthBundle.Marshal
// writes: fields 2 to 7 in ascending order, each at most once and only when
// not zero or empty, with its own wire type, minimal varints, lengths
// within the body, members within uint32, and nothing else. ok is false for
// anything else, which readGogo then decides. The byte fields are copied
// into one allocation, each capped at its length, so the bundle keeps
// nothing of tx (as the codec's copies did not).
func readCanonical(body []byte) (hb types.HealthBundle, ok bool) {
	var fields [8][]byte // by field number; 3, 5, 6, 7 are bytes
	size, last := 0, uint64(0)
	for i := 0; i < len(body); {
		key, n := minimalUvarint(body[i:])
		if n == 0 || key>>3 <= last {
			return types.HealthBundle{}, false
		}
		i += n
		field, wire := key>>3, key&7
		last = field
		v, n := minimalUvarint(body[i:])
		if n == 0 || v == 0 {
			return types.HealthBundle{}, false
		}
		i += n
		switch {
		case field == 2 && wire == 0:
			hb.EpochIndex = v
		case field == 4 && wire == 0 && v <= math.MaxUint32:
			hb.Members = uint32(v)
		case (field == 3 || field >= 5 && field <= 7) && wire == 2 && v <= uint64(len(body)-i):
			fields[field] = body[i : i+int(v)]
			i += int(v)
			size += int(v)
		default:
			return types.HealthBundle{}, false
		}
	}
	buf := make([]byte, 0, size)
	take := func(f []byte) []byte {
		if len(f) == 0 {
			return nil
		}
		start := len(buf)
		buf = append(buf, f...)
		return buf[start:len(buf):len(buf)]
	}
	hb.Samples, hb.Extensions, hb.Signatures, hb.Service = take(fields[3]), take(fields[5]), take(fields[6]), take(fields[7])
	return hb, true
}

// minimalUvarint is binary.Uvarint of a varint written in as few bytes as
// it can be (as the codec writes it), n = 0 for any other.
func minimalUvarint(bz []byte) (v uint64, n int) {
	v, n = binary.Uvarint(bz)
	if n <= 0 || n > 1 && bz[n-1] == 0 {
		return 0, 0
	}
	return v, n
}
