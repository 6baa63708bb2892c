package keeper

import (
	"context"

	"github.com/inferenced/inferenced/x/inference/types"
)

// QueueTrafficSample exposes the outcome queue to benchmarks.
func (k Keeper) QueueTrafficSample(ctx context.Context, inf types.Inference, miss bool) error {
	return k.queueTrafficSample(ctx, inf, miss)
}

// RestoreHealth stores a breaker record as genesis import does.
func (k Keeper) RestoreHealth(ctx context.Context, h types.ExecutorHealth) error {
	return k.restoreHealth(ctx, h)
}
