package keeper

import (
	"context"
	"slices"

	"cosmossdk.io/collections"

	"github.com/inferenced/inferenced/x/inference/health"
	"github.com/inferenced/inferenced/x/inference/routecache"
	"github.com/inferenced/inferenced/x/inference/types"
)

// Breaker exposes the breaker's store to tests, which read it back whole
// (health.Census).
func (k Keeper) Breaker() health.Store { return k.health }

// QueueTrafficSample exposes the outcome queue to benchmarks.
func (k Keeper) QueueTrafficSample(ctx context.Context, inf types.Inference, miss bool) error {
	return k.health.QueueOutcome(ctx, inf, miss)
}

// RestoreHealth stores a breaker record as genesis import does.
func (k Keeper) RestoreHealth(ctx context.Context, h types.ExecutorHealth) error {
	return k.health.Restore(ctx, h)
}

// ForgetRouteTables drops the query path's route tables. The fixture's
// draws read the state so far in the block, which a node's queries never
// see (they read a committed height), so each draw starts afresh.
func (k Keeper) ForgetRouteTables() { k.seams.routes.Clear() }

// RouteTablesKept is how many committed heights the query path holds a
// route table for (a table that failed to build is not kept).
func (k Keeper) RouteTablesKept() int { return k.seams.routes.Len() }

// RouteReady reports whether the route of model at committed is built
// already (by a query or by WarmRouteTables), without building it.
func (k Keeper) RouteReady(committed int64, model string) bool {
	t, ok := k.seams.routes.Peek(routecache.Key{Height: committed, Generation: k.seams.stageGeneration})
	if !ok {
		return false
	}
	return slices.Contains(t.routes.Keys(), model)
}

// WarmQueriedWithin is warmQueriedWithin, for tests.
const WarmQueriedWithin = warmQueriedWithin

// SetV3Inference stores inf as a version-3 binary did: keyed by id alone,
// and, when STARTED, queued for expiry by (expiration height, id).
func (m Migrator) SetV3Inference(ctx context.Context, inf types.Inference) error {
	old := m.v3()
	if err := old.inferences.Set(ctx, inf.InferenceId, inf); err != nil {
		return err
	}
	if inf.Status != types.INFERENCE_STATUS_STARTED {
		return nil
	}
	return old.expiry.Set(ctx, collections.Join(inf.ExpirationHeight, inf.InferenceId))
}

// SetV3Expiry stores a version-3 expiry entry (expiration height, id).
func (m Migrator) SetV3Expiry(ctx context.Context, height int64, id string) error {
	return m.v3().expiry.Set(ctx, collections.Join(height, id))
}
