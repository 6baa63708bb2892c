// Package ve is the health vote extension: its strict codec here, the
// ExtendVote and VerifyVoteExtension handlers beside it. An extension is
// either empty (the validator abstains) or the one canonical encoding of a
// HealthVoteExtension for an epoch, with exactly one 2-bit verdict per
// member of that epoch's group.
package ve

import (
	"bytes"
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
// varints and explicit defaults all re-encode differently. An empty input
// decodes to the zero extension (abstain).
func Decode(bz []byte, n int) (types.HealthVoteExtension, error) {
	var ext types.HealthVoteExtension
	if len(bz) > MaxSize(n) {
		return ext, fmt.Errorf("%w: %d bytes, at most %d for %d executors", ErrOversized, len(bz), MaxSize(n), n)
	}
	if len(bz) == 0 {
		return ext, nil
	}
	if err := ext.Unmarshal(bz); err != nil {
		return types.HealthVoteExtension{}, fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	again, err := ext.Marshal()
	if err != nil || !bytes.Equal(again, bz) {
		return types.HealthVoteExtension{}, ErrNonCanonical
	}
	return ext, nil
}

// Validate checks a decoded, non-empty extension against the epoch whose
// group has n members.
func Validate(ext types.HealthVoteExtension, epoch uint64, n int) error {
	if ext.EpochIndex != epoch {
		return fmt.Errorf("%w: %d, current %d", ErrWrongEpoch, ext.EpochIndex, epoch)
	}
	return verdict.Check(ext.Verdicts, n)
}
