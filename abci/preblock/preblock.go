// Package preblock wraps the module manager's PreBlocker with the circuit
// breaker's one step per block: after the modules' pre-blockers (upgrade,
// auth) it reads the attested samples of the block's health bundle and
// applies them, with the cooldown promotions and the traffic samples of the
// previous block, so that selection and enforcement in this block see them.
package preblock

import (
	"context"
	"fmt"

	abci "github.com/cometbft/cometbft/abci/types"
	sdk "github.com/cosmos/cosmos-sdk/types"

	"github.com/inferenced/inferenced/abci/proposals"
	"github.com/inferenced/inferenced/appmetrics"
)

// Breaker is the module's side of the step (the x/inference keeper).
type Breaker interface {
	// ApplyHealth runs the breaker's step for the block with the
	// attestations its bundle carries (epoch, group size, packed liveness
	// verdicts, encoded service rates; none when both are empty) and
	// returns how many liveness samples it applied.
	ApplyHealth(ctx context.Context, epoch uint64, members int, samples, service []byte) (oks, misses int, err error)
}

// Modules is what the handler wraps: the module manager's pre-blockers.
type Modules interface {
	PreBlock(ctx sdk.Context) (*sdk.ResponsePreBlock, error)
}

// Bundles finds the health bundle of a decided block: the one this node
// accepted in ProcessProposal when the bytes are the same (reused), else
// decoded now (proposals.Accepted).
type Bundles interface {
	Find(txs [][]byte) (b proposals.Bundle, found, reused bool, err error)
}

// Handler applies the health bundle of each decided block.
type Handler struct {
	breaker Breaker
	bundles Bundles
}

// NewHandler returns the pre-block handler over the breaker, reading
// bundles through bundles.
func NewHandler(breaker Breaker, bundles Bundles) Handler {
	return Handler{breaker: breaker, bundles: bundles}
}

// WrappedPreBlocker runs modules' pre-blockers, then the breaker's step with
// the block's attested samples. An error of either fails the block, as the
// module manager's own would.
func (h Handler) WrappedPreBlocker(modules Modules) sdk.PreBlocker {
	return func(ctx sdk.Context, req *abci.RequestFinalizeBlock) (*sdk.ResponsePreBlock, error) {
		rsp, err := modules.PreBlock(ctx)
		if err != nil {
			return nil, err
		}
		b := h.bundle(ctx, req)
		oks, misses, err := h.breaker.ApplyHealth(ctx, b.Epoch, b.Members, b.Samples, b.Service)
		if err != nil {
			return nil, fmt.Errorf("circuit breaker step: %w", err)
		}
		appmetrics.Add(seriesSamplesOK, oks)
		appmetrics.Add(seriesSamplesMiss, misses)
		return rsp, nil
	}
}

// bundle reads the health bundle of a block that ProcessProposal accepted
// (the empty bundle when the block has none). Every node reads the same
// bytes the same way; a bundle that does not decode here (which
// ProcessProposal rules out) only skips the block's attestations.
func (h Handler) bundle(ctx sdk.Context, req *abci.RequestFinalizeBlock) proposals.Bundle {
	if !proposals.ExtensionsEnabled(ctx, req.Height) {
		return proposals.Bundle{}
	}
	b, found, _, err := h.bundles.Find(req.Txs)
	if !found {
		return proposals.Bundle{}
	}
	if err != nil {
		ctx.Logger().Error("undecodable health bundle in a decided block", "height", req.Height, "err", err)
		return proposals.Bundle{}
	}
	return b
}
