package main

import (
	"context"
	"errors"
	"fmt"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/inferenced/inferenced/x/inference/types"
)

// settle waits until every started inference is past its expiry, then
// counts the chain's verdict for each one.
func (d *driver) settle(ctx context.Context) error {
	if len(d.started) == 0 {
		return nil
	}
	params, err := d.chain.inference.Params(ctx, &types.QueryParamsRequest{})
	if err != nil {
		return err
	}
	h, err := d.chain.height(ctx)
	if err != nil {
		return err
	}
	// A start sent during block h lands in h+1 at the latest (or h+2 if the
	// mempool was full) and expires in that block's EndBlock + expiration.
	target := h + int64(params.Params.ExpirationBlocks) + 3
	for h < target {
		if h, err = d.chain.waitForBlockAfter(ctx, h); err != nil {
			return fmt.Errorf("waiting for block %d: %w", target, err)
		}
	}
	for _, s := range d.started {
		res, err := d.chain.inference.Inference(ctx, &types.QueryInferenceRequest{InferenceId: s.id, TransferAgent: s.agent.address})
		switch {
		case status.Code(err) == codes.NotFound:
			d.stats.update(s.executor, func(es *executorStats) { es.ChainMissing++ })
			if err := d.refusedInBlock(ctx, s); err != nil {
				return err
			}
			continue
		case err != nil:
			return err
		}
		d.stats.update(s.executor, func(es *executorStats) {
			switch res.Inference.Status {
			case types.INFERENCE_STATUS_FINISHED:
				es.ChainFinished++
			case types.INFERENCE_STATUS_EXPIRED:
				es.ChainExpired++
			default:
				es.ChainOpen++
			}
		})
		d.stats.agent(s.agent.name, func(as *agentStats) {
			switch res.Inference.Status {
			case types.INFERENCE_STATUS_FINISHED:
				as.Finished++
			case types.INFERENCE_STATUS_EXPIRED:
				as.Expired++
			default:
				as.Open++
			}
		})
	}
	return nil
}

// refusedInBlock counts a start that passed CheckTx but left no inference:
// its block refused it (an agent stopped during the run is refused there),
// so it moves from the agent's starts to its refusals, by the chain's reason.
func (d *driver) refusedInBlock(ctx context.Context, s startedInference) error {
	res, ok, err := d.chain.committedTx(ctx, s.hash)
	if err != nil {
		return err
	}
	reason := "start committed but no inference on chain"
	switch {
	case !ok:
		reason = "start never committed"
	case res.refused != nil:
		reason = res.refused.Reason
	}
	d.stats.agent(s.agent.name, func(as *agentStats) { as.Starts-- })
	d.refuse(s.agent.name, errors.New(reason))
	return nil
}
