package proposals

import (
	"bytes"
	"errors"
	"fmt"

	abci "github.com/cometbft/cometbft/abci/types"
	cmttypes "github.com/cometbft/cometbft/types"

	"cosmossdk.io/log/v2"
	sdk "github.com/cosmos/cosmos-sdk/types"

	"github.com/inferenced/inferenced/abci/ve"
	"github.com/inferenced/inferenced/appmetrics"
	"github.com/inferenced/inferenced/x/inference/aggregate"
	"github.com/inferenced/inferenced/x/inference/service"
)

// KeySource gives the validators' consensus keys as the context's state
// holds them (staking).
type KeySource func(ctx sdk.Context) KeyLookup

// Handler wraps the app's PrepareProposal and ProcessProposal handlers (the
// SDK defaults): mempool behaviour is theirs; this layer adds, checks and
// strips the health bundle at tx[0].
type Handler struct {
	prepare sdk.PrepareProposalHandler
	process sdk.ProcessProposalHandler
	groups  ve.GroupReader
	keys    KeySource
	layouts Switch
	logger  log.Logger
	// accepted remembers the bundle of the last proposal ProcessProposal
	// accepted, for the pre-blocker (Accepted).
	accepted *Accepted
}

// NewHandler wraps prepare and process; layouts says which bundle layout
// each height carries.
func NewHandler(prepare sdk.PrepareProposalHandler, process sdk.ProcessProposalHandler, groups ve.GroupReader, keys KeySource,
	layouts Switch, logger log.Logger,
) Handler {
	return Handler{prepare: prepare, process: process, groups: groups, keys: keys, layouts: layouts, logger: logger, accepted: NewAccepted()}
}

// Accepted is the bundle of the last proposal ProcessProposal accepted,
// for the pre-blocker to read without decoding it again.
func (h Handler) Accepted() *Accepted { return h.accepted }

// ExtensionsEnabled reports whether the block at height carries the vote
// extensions of the block before it, hence a health bundle.
func ExtensionsEnabled(ctx sdk.Context, height int64) bool {
	cp := ctx.ConsensusParams()
	return cp.Abci != nil && cp.Abci.VoteExtensionsEnableHeight != 0 && height > cp.Abci.VoteExtensionsEnableHeight
}

// emptyBundle is what a proposer injects, in the layout in force, when it
// cannot build a bundle (too few valid extensions): it withholds
// attestations from its block but can never forge them. It is the prefix
// alone.
func emptyBundle(layout Layout) []byte {
	p, _ := prefixOf(layout)
	return bytes.Clone(p)
}

// protoSize is what a transaction costs against MaxTxBytes: CometBFT counts
// each one with its protobuf field tag and length prefix.
func protoSize(tx []byte) int64 { return cmttypes.ComputeProtoSizeForTxs([]cmttypes.Tx{tx}) }

// PrepareProposal puts the bundle, in the layout in force at the height,
// first and lets the inner handler fill the rest of the block within what
// is left of MaxTxBytes. It never fails a proposal for want of a bundle:
// on any error or panic it proposes the bundle (or the empty one) alone,
// since a block without tx[0] would be rejected by every validator. Only
// a state that cannot say the layout (a store read failing) fails it.
func (h Handler) PrepareProposal() sdk.PrepareProposalHandler {
	return func(ctx sdk.Context, req *abci.RequestPrepareProposal) (resp *abci.ResponsePrepareProposal, err error) {
		if !ExtensionsEnabled(ctx, req.Height) {
			return h.prepare(ctx, req)
		}
		layout, err := LayoutAt(ctx, h.layouts, req.Height)
		if err != nil {
			return nil, err
		}
		bundle := emptyBundle(layout)
		defer func() {
			if r := recover(); r != nil {
				h.logger.Error("PrepareProposal panicked; proposing the bundle alone", "height", req.Height, "panic", r)
				resp, err = &abci.ResponsePrepareProposal{Txs: [][]byte{bundle}}, nil
			}
		}()
		if built, err := h.build(ctx, layout, req.Height, req.LocalLastCommit); err != nil {
			h.logger.Info("proposing without attestations", "height", req.Height, "reason", err)
		} else if protoSize(built) <= req.MaxTxBytes {
			bundle = built
		}
		appmetrics.Set(seriesBundleSize, len(bundle))
		inner := *req
		inner.MaxTxBytes -= protoSize(bundle)
		resp, err = h.prepare(ctx, &inner)
		if err != nil {
			h.logger.Error("inner PrepareProposal failed; proposing the bundle alone", "height", req.Height, "err", err)
			return &abci.ResponsePrepareProposal{Txs: [][]byte{bundle}}, nil
		}
		txs := make([][]byte, 0, len(resp.Txs)+1)
		txs = append(txs, bundle)
		for _, tx := range resp.Txs {
			if !IsBundle(tx) {
				txs = append(txs, tx)
			}
		}
		return &abci.ResponsePrepareProposal{Txs: txs}, nil
	}
}

// samples computes the packed attested samples and the encoded service
// rates of a checked commit for a group of n, its verdicts relative to ref
// (keeper.VerdictReference).
func samples(signed Signed, n int, ref []byte) (packed, rates []byte, err error) {
	if packed, err = aggregate.PackedAgainst(signed.Votes, n, ref); err != nil {
		return nil, nil, err
	}
	if rates, err = service.Encoded(signed.Service, uint64(signed.TotalPower), n); err != nil {
		return nil, nil, fmt.Errorf("service rates: %w", err)
	}
	return packed, rates, nil
}

func (h Handler) build(ctx sdk.Context, layout Layout, height int64, local abci.ExtendedCommitInfo) ([]byte, error) {
	voteHeight := height - 1
	checker := ve.NewChecker(ctx, h.groups, voteHeight)
	epoch, n, err := checker.Group()
	if err != nil {
		return nil, err
	}
	pruned, signed, err := Prune(local, ctx.ChainID(), voteHeight, h.keys(ctx), checker.Check)
	if dropped := countPruned(local, pruned); dropped > 0 {
		appmetrics.Add(seriesPrunedExtensions, dropped)
		h.logger.Debug("pruned invalid vote extensions", "height", height, "count", dropped)
	}
	if err != nil {
		return nil, err
	}
	ref, err := h.groups.VerdictReference(ctx, voteHeight, epoch, n)
	if err != nil {
		return nil, err
	}
	packed, rates, err := samples(signed, n, ref)
	if err != nil {
		return nil, err
	}
	b, err := NewBundle(layout, pruned, epoch, n, packed, rates)
	if err != nil {
		return nil, err
	}
	bz, err := Encode(b)
	if err != nil {
		return nil, err
	}
	// Validators refuse larger bundles before decoding; propose none rather
	// than one nobody accepts.
	if len(bz) > MaxBundleSize {
		return nil, fmt.Errorf("bundle of %d bytes exceeds %d", len(bz), MaxBundleSize)
	}
	return bz, nil
}

var reject = &abci.ResponseProcessProposal{Status: abci.ResponseProcessProposal_REJECT}

// ProcessProposal requires the bundle at tx[0] exactly when extensions are
// enabled, in the layout in force at the height, re-verifies it
// (signatures, extensions, 2/3, recomputed samples) and passes the other
// transactions to the inner handler. A bundle anywhere else, in the other
// layout, or a proposal without one, is rejected.
func (h Handler) ProcessProposal() sdk.ProcessProposalHandler {
	return func(ctx sdk.Context, req *abci.RequestProcessProposal) (*abci.ResponseProcessProposal, error) {
		bundle, txs, err := h.checkBundle(ctx, req)
		if err != nil {
			h.logger.Info("rejecting proposal", "height", req.Height, "err", err)
			return reject, nil
		}
		inner := *req
		inner.Txs = txs
		resp, err := h.process(ctx, &inner)
		if err == nil && resp.Status == abci.ResponseProcessProposal_ACCEPT && len(txs) < len(req.Txs) {
			h.accepted.remember(req.Txs[0], bundle)
		}
		return resp, err
	}
}

// Why ProcessProposal rejects a proposal's bundle.
var (
	errNoBundle        = errors.New("no health bundle at tx[0]")
	errMisplacedBundle = errors.New("a health bundle after tx[0]")
	errWrongLayout     = errors.New("health bundle in the wrong layout for its height")
)

// checkBundle is ProcessProposal's check of the bundle: the bundle and the
// transactions left for the inner handler, or why the proposal is refused.
func (h Handler) checkBundle(ctx sdk.Context, req *abci.RequestProcessProposal) (Bundle, [][]byte, error) {
	txs := req.Txs
	var bundle Bundle
	if ExtensionsEnabled(ctx, req.Height) {
		want, err := LayoutAt(ctx, h.layouts, req.Height)
		if err != nil {
			return Bundle{}, nil, err
		}
		b, found, err := Find(txs)
		if !found {
			return Bundle{}, nil, errNoBundle
		}
		if err == nil && b.Layout != want {
			err = fmt.Errorf("%w: %s, block %d carries %s", errWrongLayout, b.Layout, req.Height, want)
		}
		if err == nil {
			appmetrics.Set(seriesBundleSize, len(txs[0]))
			err = h.verify(ctx, req.Height, b, req.ProposedLastCommit)
		}
		if err != nil {
			return Bundle{}, nil, fmt.Errorf("bad health bundle: %w", err)
		}
		bundle, txs = b, txs[1:]
	}
	for _, tx := range txs {
		if IsBundle(tx) {
			return Bundle{}, nil, errMisplacedBundle
		}
	}
	return bundle, txs, nil
}

// verify re-checks a decoded bundle against the block's last commit.
func (h Handler) verify(ctx sdk.Context, height int64, b Bundle, last abci.CommitInfo) error {
	if isEmpty(b) {
		seriesEmptyBundles.Inc()
		return nil
	}
	voteHeight := height - 1
	checker := ve.NewChecker(ctx, h.groups, voteHeight)
	epoch, n, err := checker.Group()
	if err != nil {
		return err
	}
	// Before inflating anything: the bounds of what follows come from the
	// group and the last commit, not from the bundle.
	if epoch != b.Epoch || n != b.Members {
		return fmt.Errorf("bundle for epoch %d of %d members, the block attests about epoch %d of %d", b.Epoch, b.Members, epoch, n)
	}
	ec, err := b.Commit(last)
	if err != nil {
		return err
	}
	signed, err := Check(ec, last, ctx.ChainID(), voteHeight, h.keys(ctx), checker.Check)
	if err != nil {
		return err
	}
	abstained := 0
	for _, v := range signed.Votes {
		if v.Abstain {
			abstained++
		}
	}
	appmetrics.Set(seriesVotesAttested, len(signed.Votes)-abstained)
	appmetrics.Set(seriesVotesAbstained, abstained)
	ref, err := h.groups.VerdictReference(ctx, voteHeight, epoch, n)
	if err != nil {
		return err
	}
	packed, rates, err := samples(signed, n, ref)
	if err != nil {
		return err
	}
	if !bytes.Equal(packed, b.Samples) {
		return errors.New("samples do not follow from the commit")
	}
	if !bytes.Equal(rates, b.Service) {
		return errors.New("service rates do not follow from the commit")
	}
	return nil
}

// countPruned is how many extensions Prune removed.
func countPruned(before, after abci.ExtendedCommitInfo) int {
	n := 0
	for i := range before.Votes {
		if len(before.Votes[i].ExtensionSignature) > 0 && len(after.Votes[i].ExtensionSignature) == 0 {
			n++
		}
	}
	return n
}
