// Package ve is the health vote extension: its strict codec here, the
// ExtendVote and VerifyVoteExtension handlers beside it. An extension is
// either empty (the validator abstains) or the one canonical encoding of a
// HealthVoteExtension for an epoch, whose verdicts are the canonical
// compact encoding (verdict.Compact) of exactly one verdict per member of
// that epoch's group: a few bytes when nearly all are ok, never more than
// their packing; and, unless every one is unknown, the validator's service
// reports in the canonical encoding of x/inference/service.
package ve

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/inferenced/inferenced/x/inference/service"
	"github.com/inferenced/inferenced/x/inference/types"
	"github.com/inferenced/inferenced/x/inference/verdict"
)

// overhead bounds the protobuf framing around the verdicts and the service
// reports: three tags, a 10-byte varint epoch index and two 5-byte lengths.
const overhead = 1 + 10 + 1 + 5 + 1 + 5

// MaxSize is the largest valid extension for a group of n executors: the
// compact verdicts are never longer than their packing, the service
// reports never longer than service.MaxLen.
func MaxSize(n int) int { return overhead + verdict.PackedLen(n) + service.MaxLen(n) }

var (
	ErrOversized    = errors.New("vote extension too large")
	ErrMalformed    = errors.New("vote extension does not decode")
	ErrNonCanonical = errors.New("vote extension is not canonically encoded")
	ErrWrongEpoch   = errors.New("vote extension is for another epoch")
	ErrNoEpoch      = errors.New("there is no epoch 0 to attest about")
)

// Encode returns the canonical bytes of the extension for epoch ext.EpochIndex
// whose verdicts are ext.Verdicts, packed (verdict.Pack), and whose service
// reports are ext.Service (service.Encode; empty: none), for a group of n:
// the verdicts are carried in their canonical compact form. Epoch 0 does not
// exist, and an all-ok extension for it would be the empty abstention.
func Encode(ext types.HealthVoteExtension, n int) ([]byte, error) {
	if ext.EpochIndex == 0 {
		return nil, ErrNoEpoch
	}
	compact, err := verdict.Compact(ext.Verdicts, n)
	if err != nil {
		return nil, fmt.Errorf("encode vote extension: %w", err)
	}
	if err := service.Check(ext.Service, n); err != nil {
		return nil, fmt.Errorf("encode vote extension: service: %w", err)
	}
	wire := types.HealthVoteExtension{EpochIndex: ext.EpochIndex, Verdicts: compact, Service: ext.Service}
	bz, err := wire.Marshal()
	if err != nil {
		return nil, fmt.Errorf("encode vote extension: %w", err)
	}
	return bz, nil
}

// Decode parses an extension for a group of n executors and returns it with
// its verdicts packed (the form Encode takes). It refuses input larger than
// MaxSize(n) before parsing, any protobuf encoding other than the canonical
// one (unknown, repeated or reordered fields, non-minimal varints, explicit
// defaults) and verdicts that are not the canonical compact list of n. An
// empty input decodes to the zero extension (abstain).
func Decode(bz []byte, n int) (types.HealthVoteExtension, error) {
	wire, _, err := decodeWire(bz, n, nil)
	if err != nil || len(bz) == 0 {
		return types.HealthVoteExtension{}, err
	}
	packed, err := verdict.Expand(wire.Verdicts, n)
	if err != nil {
		return types.HealthVoteExtension{}, fmt.Errorf("%w: %w", ErrMalformed, err)
	}
	return types.HealthVoteExtension{EpochIndex: wire.EpochIndex, Verdicts: packed, Service: wire.Service}, nil
}

// decodeWire is Decode without expanding: the verdicts of the result are
// the canonical compact list of n, aliasing bz. With buf, the service
// reports are also returned decoded (service.CheckList, appending to *buf),
// for the median; without, it does not allocate.
func decodeWire(bz []byte, n int, buf *[]uint32) (types.HealthVoteExtension, service.Checked, error) {
	var none service.Checked
	if len(bz) > MaxSize(n) {
		return types.HealthVoteExtension{}, none, fmt.Errorf("%w: %d bytes, at most %d for %d executors", ErrOversized, len(bz), MaxSize(n), n)
	}
	ext, ok := parseCanonical(bz)
	if !ok {
		return types.HealthVoteExtension{}, none, rejection(bz)
	}
	if len(bz) == 0 {
		return ext, none, nil
	}
	if ext.EpochIndex == 0 {
		return types.HealthVoteExtension{}, none, ErrNoEpoch
	}
	if err := verdict.CheckCompact(ext.Verdicts, n); err != nil {
		return types.HealthVoteExtension{}, none, fmt.Errorf("%w: %w", ErrMalformed, err)
	}
	var reports service.Checked
	var err error
	if buf != nil {
		reports, *buf, err = service.CheckList(ext.Service, n, *buf)
	} else {
		err = service.Check(ext.Service, n)
	}
	if err != nil {
		return types.HealthVoteExtension{}, none, fmt.Errorf("%w: service: %w", ErrMalformed, err)
	}
	return ext, reports, nil
}

// The protobuf tags of HealthVoteExtension's fields.
const (
	tagEpochIndex = 1 << 3   // field 1, wire type 0 (varint)
	tagVerdicts   = 2<<3 | 2 // field 2, wire type 2 (length-delimited)
	tagService    = 3<<3 | 2 // field 3, wire type 2 (length-delimited)
)

// parseCanonical reads the only layout Encode produces, without allocating:
// epoch_index as a minimal non-zero varint if present, then verdicts and
// then service, each as non-empty bytes if present, then nothing. Every block checks about a
// hundred extensions, so the reference decode-and-re-encode is kept for
// naming what is wrong with a rejected one.
func parseCanonical(bz []byte) (types.HealthVoteExtension, bool) {
	var ext types.HealthVoteExtension
	if len(bz) > 0 && bz[0] == tagEpochIndex {
		v, k := minimalUvarint(bz[1:])
		if k <= 0 || v == 0 {
			return types.HealthVoteExtension{}, false
		}
		ext.EpochIndex, bz = v, bz[1+k:]
	}
	var ok bool
	if ext.Verdicts, bz, ok = parseBytes(bz, tagVerdicts); !ok {
		return types.HealthVoteExtension{}, false
	}
	if ext.Service, bz, ok = parseBytes(bz, tagService); !ok {
		return types.HealthVoteExtension{}, false
	}
	return ext, len(bz) == 0
}

// parseBytes reads a non-empty length-delimited field with tag if bz starts
// with it, and returns what follows; ok is false for a malformed one.
func parseBytes(bz []byte, tag byte) (field, rest []byte, ok bool) {
	if len(bz) == 0 || bz[0] != tag {
		return nil, bz, true
	}
	l, k := minimalUvarint(bz[1:])
	if k <= 0 || l == 0 || l > uint64(len(bz)-1-k) {
		return nil, nil, false
	}
	end := 1 + k + int(l)
	return bz[1+k : end : end], bz[end:], true
}

// minimalUvarint decodes a varint written in as few bytes as its value
// needs (its last byte is not zero); k <= 0 when there is none.
func minimalUvarint(bz []byte) (v uint64, k int) {
	v, k = binary.Uvarint(bz)
	if k > 1 && bz[k-1] == 0 {
		return 0, -1
	}
	return v, k
}

// rejection says why bytes that are not canonical were refused: they do
// not decode at all, or they decode but are not the canonical encoding.
func rejection(bz []byte) error {
	var ext types.HealthVoteExtension
	if err := ext.Unmarshal(bz); err != nil {
		return fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	return ErrNonCanonical
}

func checkEpoch(ext types.HealthVoteExtension, epoch uint64) error {
	if ext.EpochIndex != epoch {
		return fmt.Errorf("%w: %d, current %d", ErrWrongEpoch, ext.EpochIndex, epoch)
	}
	return nil
}
