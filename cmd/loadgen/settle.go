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
			if err := d.missing(ctx, s); err != nil {
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

// missing counts a start that passed CheckTx but whose inference the chain
// no longer has, by what its transaction says (classifyMissing).
func (d *driver) missing(ctx context.Context, s startedInference) error {
	res, committed, err := d.chain.committedTx(ctx, s.hash)
	if err != nil {
		return fmt.Errorf("look up the start of %s: %w", s.id, err)
	}
	pruned, reason := classifyMissing(res, committed)
	if pruned {
		d.stats.update(s.executor, func(es *executorStats) { es.ChainPruned++ })
		d.stats.agent(s.agent.name, func(as *agentStats) { as.Pruned++ })
		return nil
	}
	d.stats.update(s.executor, func(es *executorStats) { es.ChainMissing++ })
	d.stats.agent(s.agent.name, func(as *agentStats) { as.Starts-- })
	d.refuse(s.agent.name, errors.New(reason))
	return nil
}

// classifyMissing says why a started inference is not on chain: its start
// never committed or its block refused it (an agent stopped during the run
// is refused there): a refusal, with its reason; or its start succeeded,
// so the inference was stored, closed and pruned (inference_retention_epochs)
// before the driver settled: a start that happened, not a refusal.
func classifyMissing(res txResult, committed bool) (pruned bool, reason string) {
	switch {
	case !committed:
		return false, "start never committed"
	case res.refused != nil:
		return false, res.refused.Reason
	}
	return true, ""
}
