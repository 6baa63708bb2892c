// Package routes answers GetRandomExecutor, the query every client request
// starts with, from route tables kept per committed height: node memory,
// never state. It sits above the keeper and reads the committed store
// through it; the answers are the keeper's consensus path's
// (Keeper.RandomExecutor) for the same state and seed, which also answers
// any fault. The Warmer builds the next height's tables after each commit.
package routes

import (
	"context"
	"fmt"
	"sync/atomic"

	storetypes "github.com/cosmos/cosmos-sdk/store/v2/types"

	sdk "github.com/cosmos/cosmos-sdk/types"

	"github.com/inferenced/inferenced/x/inference/keeper"
	"github.com/inferenced/inferenced/x/inference/selection"
	"github.com/inferenced/inferenced/x/inference/types"
)

// keptHeights is how many committed heights the query path keeps a route
// table for: the tip and the few a query may still be reading while the
// next block commits. Memory is at most this many copies of the group
// (each model's pool holds only the members serving it).
const keptHeights = 4

// warmQueriedWithin is how recent a client query must be for Warm to
// build ahead: a node no client asks builds nothing.
const warmQueriedWithin = 10

// Routes keeps the route tables of one node. It is safe for concurrent use.
type Routes struct {
	k      keeper.Keeper
	tables *cache[*table]
	// queried is the committed height of the last client query of a route.
	queried atomic.Int64
}

// New is the route tables of the keeper's store, empty.
func New(k keeper.Keeper) *Routes {
	return &Routes{k: k, tables: newCache[*table](keptHeights)}
}

// RandomExecutor is Keeper.RandomExecutor for a query over the committed
// state of the block at committed, for a start in the block after it. It
// gives the keeper's answer for the same state and seed; the route table
// it draws from is kept per committed height, so ctx must read exactly that
// committed state, as baseapp's query contexts do. Any fault is answered by
// the keeper itself.
func (r *Routes) RandomExecutor(ctx context.Context, model string, seed uint64, committed int64) (selection.Draw, error) {
	next := committed + 1
	if err := types.ValidateModel(model); err != nil {
		return r.k.RandomExecutor(ctx, model, seed, next)
	}
	r.noteQuery(committed)
	rt, err := r.route(ctx, model, committed)
	if err != nil { // a fault, or a height too old to keep: the per-member path on the caller's meter
		return r.k.RandomExecutor(ctx, model, seed, next)
	}
	if rt.empty {
		return selection.Draw{}, selection.NoExecutor(model)
	}
	return rt.draw.Draw(seed)
}

// route is model's route at committed, from that height's table (built now
// if it is not kept yet).
func (r *Routes) route(ctx context.Context, model string, committed int64) (route, error) {
	// The table serves every query at this height, so no one query pays for
	// it: it is read on a meter of its own, without a limit (a build is at
	// most one per kept height, bounded by the group and the registry), and
	// a query-gas-limit the per-member path fits keeps being answered.
	shared := sdk.UnwrapSDKContext(ctx).WithGasMeter(storetypes.NewInfiniteGasMeter())
	t, err := r.tables.Get(heightKey{Height: committed}, func(base *table, _ bool) (*table, error) {
		return build(shared, r.k, committed+1, base)
	})
	if err != nil {
		return route{}, err
	}
	return t.route(shared, r.k, model)
}

// noteQuery records a client query at committed: queried is the highest
// height queried (a query at an old height does not lower it).
func (r *Routes) noteQuery(committed int64) {
	for {
		last := r.queried.Load()
		if committed <= last || r.queried.CompareAndSwap(last, committed) {
			return
		}
	}
}

// Warm builds, ahead of the queries, the route table of the committed
// height ctx reads and the routes of the models queried at the table before
// it, so that the first query of a block finds them ready. It does nothing
// on a node no client has queried in the last warmQueriedWithin heights.
// ctx must be a query context (the app calls it after each commit, off the
// consensus path); the answers are those a query would build, so warming
// changes what a query costs, never what it says.
func (r *Routes) Warm(ctx context.Context) error {
	committed := sdk.UnwrapSDKContext(ctx).BlockHeight()
	if committed-r.queried.Load() > warmQueriedWithin {
		return nil
	}
	prev, ok := r.tables.Latest()
	if !ok {
		return nil
	}
	for _, model := range prev.routes.Keys() {
		if _, err := r.route(ctx, model, committed); err != nil {
			return fmt.Errorf("warm route of %q at %d: %w", model, committed, err)
		}
	}
	return nil
}
