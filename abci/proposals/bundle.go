// Package proposals wraps the SDK's PrepareProposal and ProcessProposal
// handlers to carry the health bundle at tx[0]: the bundle's strict codec
// (bundle.go), the checks of the extended commit it carries (commit.go) and
// the handlers (handler.go).
package proposals

import (
	"bytes"
	"errors"
	"fmt"

	abci "github.com/cometbft/cometbft/abci/types"

	"github.com/inferenced/inferenced/x/inference/types"
)

// prefix starts every injected bundle. 0xff begins a protobuf tag whose
// wire type (the low three bits of the varint 0x7f|'H'<<7) is 7, which does
// not exist: no protobuf transaction decoder can accept these bytes, so a
// bundle can never pass for a user transaction, nor a transaction for a
// bundle.
var prefix = []byte("\xffHEALTH1")

// MaxBundleSize bounds an injected bundle before it is decoded. 300
// validators' extensions of the largest group max_participants allows fit
// (TestWorstCaseBundleFits); a proposer whose bundle would not fit proposes
// the empty bundle instead.
const MaxBundleSize = 4 << 20

var (
	ErrNotBundle    = errors.New("not a health bundle")
	ErrBadBundle    = errors.New("malformed health bundle")
	ErrNonCanonical = errors.New("health bundle is not canonically encoded")
)

// Bundle is a decoded health bundle.
type Bundle struct {
	Commit  abci.ExtendedCommitInfo
	Epoch   uint64
	Samples []byte // packed, one 2-bit value per group member
}

// IsBundle reports whether tx carries the bundle prefix.
func IsBundle(tx []byte) bool { return bytes.HasPrefix(tx, prefix) }

// Find is the one rule for where a block keeps its health bundle: tx[0],
// behind prefix. found is false when tx[0] is not a bundle (a block without
// transactions, or one made with vote extensions off); a tx[0] that carries
// the prefix but does not decode strictly is an error. Whether a block must
// carry one is the caller's to say (ExtensionsEnabled).
func Find(txs [][]byte) (b Bundle, found bool, err error) {
	if len(txs) == 0 || !IsBundle(txs[0]) {
		return Bundle{}, false, nil
	}
	b, err = Decode(txs[0])
	if err != nil {
		return Bundle{}, true, err
	}
	return b, true, nil
}

// Encode returns the prefixed, canonical bytes of a bundle.
func Encode(b Bundle) ([]byte, error) {
	commit, err := b.Commit.Marshal()
	if err != nil {
		return nil, fmt.Errorf("encode extended commit: %w", err)
	}
	body, err := (&types.HealthBundle{ExtendedCommitInfo: commit, EpochIndex: b.Epoch, Samples: b.Samples}).Marshal()
	if err != nil {
		return nil, fmt.Errorf("encode health bundle: %w", err)
	}
	return append(append([]byte{}, prefix...), body...), nil
}

// Decode parses a bundle strictly: size bound first, then the prefix, then
// protobuf with a canonical re-encoding check at both levels (the bundle
// and the commit inside it).
func Decode(tx []byte) (Bundle, error) {
	if len(tx) > MaxBundleSize {
		return Bundle{}, fmt.Errorf("%w: %d bytes", ErrBadBundle, len(tx))
	}
	if !IsBundle(tx) {
		return Bundle{}, ErrNotBundle
	}
	body := tx[len(prefix):]
	var hb types.HealthBundle
	if err := hb.Unmarshal(body); err != nil {
		return Bundle{}, fmt.Errorf("%w: %v", ErrBadBundle, err)
	}
	if again, err := hb.Marshal(); err != nil || !bytes.Equal(again, body) {
		return Bundle{}, ErrNonCanonical
	}
	var commit abci.ExtendedCommitInfo
	if err := commit.Unmarshal(hb.ExtendedCommitInfo); err != nil {
		return Bundle{}, fmt.Errorf("%w: extended commit: %v", ErrBadBundle, err)
	}
	if again, err := commit.Marshal(); err != nil || !bytes.Equal(again, hb.ExtendedCommitInfo) {
		return Bundle{}, fmt.Errorf("%w: extended commit", ErrNonCanonical)
	}
	return Bundle{Commit: commit, Epoch: hb.EpochIndex, Samples: hb.Samples}, nil
}
