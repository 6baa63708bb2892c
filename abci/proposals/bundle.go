// Package proposals wraps the SDK's PrepareProposal and ProcessProposal
// handlers to carry the health bundle at tx[0]: the bundle's strict codec
// (bundle.go), the checks of the extended commit it carries (commit.go) and
// the handlers (handler.go).
package proposals

import (
	"errors"
	"fmt"

	abci "github.com/cometbft/cometbft/abci/types"
	cmttypes "github.com/cometbft/cometbft/types"

	"github.com/inferenced/inferenced/abci/ve"
	"github.com/inferenced/inferenced/x/inference/service"
	"github.com/inferenced/inferenced/x/inference/types"
	"github.com/inferenced/inferenced/x/inference/verdict"
)

// MaxBundleSize bounds an injected bundle before it is decoded. 300
// validators' extensions of the largest group max_participants allows fit
// even when they do not compress (TestWorstCaseBundleFits); a proposer
// whose bundle would not fit proposes the empty bundle instead.
const MaxBundleSize = 4 << 20

// maxVotes bounds the votes a bundle is decoded for without a last commit
// to count them (Votes): twice the 150 validators designed for.
const maxVotes = 300

var (
	ErrNotBundle    = errors.New("not a health bundle")
	ErrBadBundle    = errors.New("malformed health bundle")
	ErrNonCanonical = errors.New("health bundle is not canonically encoded")
)

// Bundle is a health bundle: the attested samples of the epoch whose group
// has Members executors, and the extensions they follow from. The votes are
// kept as carried (compressed extensions, framed signatures) until
// Commit or Votes asks for them, so that reading the samples (the
// pre-blocker, Find) costs no decompression.
type Bundle struct {
	// Layout is the wire layout the bundle is (or will be) encoded in.
	Layout  Layout
	Epoch   uint64
	Members int
	Samples []byte // packed, one 2-bit value per member
	// Service is the attested service rates (service.Encode; empty when
	// no member has one).
	Service []byte

	extensions []byte // the framed extensions, compressed as Layout says
	signatures []byte // framed signatures
}

// VoteExtension is one vote's extension and its signature, as a bundle
// carries them (both empty: the vote has none, or it was pruned).
type VoteExtension struct {
	Extension, Signature []byte
}

// NewBundle is the bundle, in layout, of a (pruned) extended commit whose
// checked extensions attest about epoch, a group of members, with the
// packed samples and the encoded service rates computed from them.
func NewBundle(layout Layout, ec abci.ExtendedCommitInfo, epoch uint64, members int, samples, rates []byte) (Bundle, error) {
	exts := make([][]byte, len(ec.Votes))
	sigs := make([][]byte, len(ec.Votes))
	size := 0
	for i, v := range ec.Votes {
		exts[i], sigs[i] = v.VoteExtension, v.ExtensionSignature
		size += frameEntrySize(len(v.VoteExtension))
	}
	body := appendFrame(make([]byte, 0, size), exts)
	var compressed []byte
	var err error
	switch layout {
	case LayoutV2:
		compressed, err = deflate(body)
	case LayoutV3:
		compressed, err = compressZstd(body)
	default:
		return Bundle{}, fmt.Errorf("new health bundle: %s", layout)
	}
	if err != nil {
		return Bundle{}, fmt.Errorf("compress extensions (%s): %w", layout, err)
	}
	return Bundle{Layout: layout, Epoch: epoch, Members: members, Samples: samples, Service: rates,
		extensions: compressed, signatures: appendFrame(nil, sigs)}, nil
}

// IsBundle reports whether tx carries a bundle prefix, of either layout.
func IsBundle(tx []byte) bool {
	_, ok := layoutOf(tx)
	return ok
}

// Find is the one rule for where a block keeps its health bundle: tx[0],
// behind either layout's prefix (the bundle says which: ProcessProposal
// checks it is the one in force at the block's height, readers of a
// decided block take it as it is). found is false when tx[0] is not a bundle (a block without
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

// Encode returns the prefixed, canonical bytes of a bundle; their length is
// what the bundle costs a block.
func Encode(b Bundle) ([]byte, error) {
	prefix, ok := prefixOf(b.Layout)
	if !ok {
		return nil, fmt.Errorf("encode health bundle: %s", b.Layout)
	}
	if b.Members < 0 || uint64(b.Members) > types.MaxMaxParticipants {
		return nil, fmt.Errorf("encode health bundle: %d members", b.Members)
	}
	samples, err := verdict.Compact(b.Samples, b.Members)
	if err != nil {
		return nil, fmt.Errorf("encode health bundle samples: %w", err)
	}
	if err := service.Check(b.Service, b.Members); err != nil {
		return nil, fmt.Errorf("encode health bundle service rates: %w", err)
	}
	hb := types.HealthBundle{
		EpochIndex: b.Epoch, Samples: samples, Members: uint32(b.Members),
		Extensions: b.extensions, Signatures: b.signatures, Service: b.Service,
	}
	body, err := hb.Marshal()
	if err != nil {
		return nil, fmt.Errorf("encode health bundle: %w", err)
	}
	return append(append([]byte{}, prefix...), body...), nil
}

// Decode parses a bundle of either layout strictly: size bound first, then
// the prefix, then protobuf with a canonical re-encoding check, then the
// samples (the canonical compact list of Members, at most
// max_participants' cap). It does not decompress the extensions.
func Decode(tx []byte) (Bundle, error) {
	if len(tx) > MaxBundleSize {
		return Bundle{}, fmt.Errorf("%w: %d bytes", ErrBadBundle, len(tx))
	}
	layout, ok := layoutOf(tx)
	if !ok {
		return Bundle{}, ErrNotBundle
	}
	prefix, _ := prefixOf(layout)
	body := tx[len(prefix):]
	hb, err := readBundle(body)
	if err != nil {
		return Bundle{}, err
	}
	if uint64(hb.Members) > types.MaxMaxParticipants {
		return Bundle{}, fmt.Errorf("%w: %d members", ErrBadBundle, hb.Members)
	}
	samples, err := verdict.Expand(hb.Samples, int(hb.Members))
	if err != nil {
		return Bundle{}, fmt.Errorf("%w: samples: %w", ErrBadBundle, err)
	}
	if err := service.Check(hb.Service, int(hb.Members)); err != nil {
		return Bundle{}, fmt.Errorf("%w: service rates: %w", ErrBadBundle, err)
	}
	return Bundle{
		Layout: layout, Epoch: hb.EpochIndex, Members: int(hb.Members), Samples: samples, Service: hb.Service,
		extensions: hb.Extensions, signatures: hb.Signatures,
	}, nil
}

// isEmpty: the empty bundle, which carries no attestation.
func isEmpty(b Bundle) bool {
	return b.Epoch == 0 && b.Members == 0 && len(b.Samples) == 0 && len(b.Service) == 0 &&
		len(b.extensions) == 0 && len(b.signatures) == 0
}

// Empty reports whether b is the empty bundle, which carries no votes.
func (b Bundle) Empty() bool { return isEmpty(b) }

// votes decompresses and parses the bundle's extensions and signatures,
// one pair per vote, for count votes: at most count*(MaxSize+framing)
// bytes are decompressed (inflate, decompressZstd), and exactly count
// pairs must be there, each bounded (an extension by ve.MaxSize(Members),
// a signature by CometBFT's MaxSignatureSize), with nothing after them.
func (b Bundle) votes(count int) ([]VoteExtension, error) {
	sigs, err := parseFrame(b.signatures, count, cmttypes.MaxSignatureSize)
	if err != nil {
		return nil, fmt.Errorf("signatures: %w", err)
	}
	maxExt := ve.MaxSize(b.Members)
	body, err := b.decompress(count * frameEntrySize(maxExt))
	if err != nil {
		return nil, err
	}
	exts, err := parseFrame(body, count, maxExt)
	if err != nil {
		return nil, fmt.Errorf("extensions: %w", err)
	}
	out := make([]VoteExtension, count)
	for i := range out {
		out[i] = VoteExtension{Extension: exts[i], Signature: sigs[i]}
	}
	return out, nil
}

// decompress is the extensions' frame, at most limit bytes, as the
// bundle's layout compresses it.
func (b Bundle) decompress(limit int) ([]byte, error) {
	switch b.Layout {
	case LayoutV2:
		return inflate(b.extensions, limit)
	case LayoutV3:
		return decompressZstd(b.extensions, limit)
	}
	return nil, fmt.Errorf("%w: %s", ErrBadBundle, b.Layout)
}

// Votes is every vote's extension and signature, in the order of the
// block's last commit, for tools that read a decided block: the count is
// that of the carried signatures (at most maxVotes).
func (b Bundle) Votes() ([]VoteExtension, error) {
	if isEmpty(b) {
		return nil, nil
	}
	count, err := countFrame(b.signatures)
	if err != nil {
		return nil, err
	}
	if count > maxVotes {
		return nil, fmt.Errorf("%w: %d votes", ErrBadBundle, count)
	}
	return b.votes(count)
}

// Commit rebuilds the extended commit the bundle was made from: the
// round, validators, powers and flags of last (the block's last commit,
// which every validator has), with the extension and signature the bundle
// carries for each vote. Check then verifies it.
func (b Bundle) Commit(last abci.CommitInfo) (abci.ExtendedCommitInfo, error) {
	pairs, err := b.votes(len(last.Votes))
	if err != nil {
		return abci.ExtendedCommitInfo{}, err
	}
	ec := abci.ExtendedCommitInfo{Round: last.Round, Votes: make([]abci.ExtendedVoteInfo, len(pairs))}
	for i, p := range pairs {
		ec.Votes[i] = abci.ExtendedVoteInfo{
			Validator: last.Votes[i].Validator, BlockIdFlag: last.Votes[i].BlockIdFlag,
			VoteExtension: p.Extension, ExtensionSignature: p.Signature,
		}
	}
	return ec, nil
}
