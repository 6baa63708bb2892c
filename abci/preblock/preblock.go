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

	"github.com/cosmos/cosmos-sdk/telemetry"
	sdk "github.com/cosmos/cosmos-sdk/types"

	"github.com/inferenced/inferenced/abci/proposals"
	"github.com/inferenced/inferenced/abci/ve"
	"github.com/inferenced/inferenced/x/inference/keeper"
)

// Breaker is the keeper's side of the step (x/inference keeper).
type Breaker interface {
	// AttestedSamples maps a bundle's packed samples for epochIndex to
	// executors, or fails when they do not fit the epoch group.
	AttestedSamples(ctx context.Context, epochIndex uint64, packed []byte) ([]keeper.AttestedSample, error)
	// ApplyHealth runs the breaker's step for the block.
	ApplyHealth(ctx context.Context, attested []keeper.AttestedSample) error
}

// Modules is what the handler wraps: the module manager's pre-blockers.
type Modules interface {
	PreBlock(ctx sdk.Context) (*sdk.ResponsePreBlock, error)
}

// Handler applies the health bundle of each decided block.
type Handler struct {
	breaker Breaker
}

// NewHandler returns the pre-block handler over the breaker.
func NewHandler(breaker Breaker) Handler { return Handler{breaker: breaker} }

// WrappedPreBlocker runs modules' pre-blockers, then the breaker's step with
// the block's attested samples. An error of either fails the block, as the
// module manager's own would.
func (h Handler) WrappedPreBlocker(modules Modules) sdk.PreBlocker {
	return func(ctx sdk.Context, req *abci.RequestFinalizeBlock) (*sdk.ResponsePreBlock, error) {
		rsp, err := modules.PreBlock(ctx)
		if err != nil {
			return nil, err
		}
		if err := h.breaker.ApplyHealth(ctx, h.attestedSamples(ctx, req)); err != nil {
			return nil, fmt.Errorf("circuit breaker step: %w", err)
		}
		return rsp, nil
	}
}

// attestedSamples reads the health bundle of a block that ProcessProposal
// accepted. Every node reads the same bytes the same way; a bundle that
// does not decode here, or does not fit the group (which ProcessProposal
// rules out), only skips the block's attestations.
func (h Handler) attestedSamples(ctx sdk.Context, req *abci.RequestFinalizeBlock) []keeper.AttestedSample {
	if !proposals.ExtensionsEnabled(ctx, req.Height) {
		return nil
	}
	b, found, err := proposals.Find(req.Txs)
	if !found {
		return nil
	}
	if err != nil {
		ctx.Logger().Error("undecodable health bundle in a decided block", "height", req.Height, "err", err)
		return nil
	}
	samples, err := h.breaker.AttestedSamples(ctx, b.Epoch, b.Samples)
	if err != nil {
		ctx.Logger().Error("health bundle does not fit the epoch group", "height", req.Height, "err", err)
		return nil
	}
	misses := 0
	for _, s := range samples {
		if s.Miss {
			misses++
		}
	}
	telemetry.IncrCounter(float32(len(samples)-misses), ve.MetricKey("samples", "ok")...) //nolint:forbidigo // telemetry takes float32; not consensus state
	telemetry.IncrCounter(float32(misses), ve.MetricKey("samples", "miss")...)            //nolint:forbidigo // telemetry takes float32; not consensus state
	return samples
}
