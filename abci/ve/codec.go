// Package ve is the health vote extension: its strict codec here, the
// ExtendVote and VerifyVoteExtension handlers beside it. An extension is
// either empty (the validator abstains) or the one canonical encoding of a
// HealthVoteExtension for an epoch, with exactly one 2-bit verdict per
// member of that epoch's group.
package ve

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/inferenced/inferenced/x/inference/types"
	"github.com/inferenced/inferenced/x/inference/verdict"
)

// overhead bounds the protobuf framing around the verdicts: two tags, a
// 10-byte varint epoch index and a 5-byte length.
const overhead = 1 + 10 + 1 + 5

// MaxSize is the largest valid extension for a group of n executors.
func MaxSize(n int) int { return overhead + verdict.PackedLen(n) }

var (
	ErrOversized    = errors.New("vote extension too large")
	ErrMalformed    = errors.New("vote extension does not decode")
	ErrNonCanonical = errors.New("vote extension is not canonically encoded")
	ErrWrongEpoch   = errors.New("vote extension is for another epoch")
)

// Encode returns the canonical bytes of an extension.
func Encode(ext types.HealthVoteExtension) ([]byte, error) {
	bz, err := ext.Marshal()
	if err != nil {
		return nil, fmt.Errorf("encode vote extension: %w", err)
	}
	return bz, nil
}

// Decode parses an extension for a group of n executors. It refuses input
// larger than MaxSize(n) before parsing, and any encoding other than the
// canonical one: unknown fields, repeated or reordered fields, non-minimal
// varints and explicit defaults. An empty input decodes to the zero
// extension (abstain). The verdicts of the result alias bz.
func Decode(bz []byte, n int) (types.HealthVoteExtension, error) {
	if len(bz) > MaxSize(n) {
		return types.HealthVoteExtension{}, fmt.Errorf("%w: %d bytes, at most %d for %d executors", ErrOversized, len(bz), MaxSize(n), n)
	}
	if ext, ok := parseCanonical(bz); ok {
		return ext, nil
	}
	return types.HealthVoteExtension{}, rejection(bz)
}

// The protobuf tags of HealthVoteExtension's two fields.
const (
	tagEpochIndex = 1 << 3   // field 1, wire type 0 (varint)
	tagVerdicts   = 2<<3 | 2 // field 2, wire type 2 (length-delimited)
)

// parseCanonical reads the only layout Encode produces, without allocating:
// epoch_index as a minimal non-zero varint if present, then verdicts as
// non-empty bytes if present, then nothing. Every block checks about a
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
	if len(bz) > 0 && bz[0] == tagVerdicts {
		l, k := minimalUvarint(bz[1:])
		if k <= 0 || l == 0 || l > uint64(len(bz)-1-k) {
			return types.HealthVoteExtension{}, false
		}
		end := 1 + k + int(l)
		ext.Verdicts, bz = bz[1+k:end:end], bz[end:]
	}
	return ext, len(bz) == 0
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

// Validate checks a decoded, non-empty extension against the epoch whose
// group has n members.
func Validate(ext types.HealthVoteExtension, epoch uint64, n int) error {
	if ext.EpochIndex != epoch {
		return fmt.Errorf("%w: %d, current %d", ErrWrongEpoch, ext.EpochIndex, epoch)
	}
	return verdict.Check(ext.Verdicts, n)
}
