package keeper

import (
	"context"
	"fmt"
	"slices"

	sdk "github.com/cosmos/cosmos-sdk/types"

	"github.com/inferenced/inferenced/x/inference/routecache"
	"github.com/inferenced/inferenced/x/inference/types"
)

// routeTableHeights is how many committed heights the query path keeps a
// route table for: the tip and the few a query may still be reading while
// the next block commits. Memory is at most this many copies of the group
// (each model's pool holds only the members serving it).
const routeTableHeights = 4

// routeTable is the selection input of one committed height, for the query
// path: the epoch group and the participants' statuses, each read in one
// walk, and each model's selection, computed on its first query and kept.
// Everything it holds is a function of the committed state of that height
// (and of the evaluated height, one above it), so it is never stale for a
// query at that height. Consensus code never reads it.
type routeTable struct {
	rc      routeContext
	height  int64 // the evaluated height: committed + 1
	members []types.EpochMember
	// serving lists, per model, the members (indexes into members) that
	// pass the admission's model check, in group order.
	serving map[string][]int32
	// status is each participant's status by address string; a member not
	// found here is read through memberStatus, as consensus reads it.
	status map[string]types.ParticipantStatus
	routes *routecache.Memo[string, modelRoute]
}

// modelRoute is one model's selection at the table's height, ready to draw.
type modelRoute struct {
	sel     Selection
	weights []uint64
}

// buildRouteTable reads the group and the statuses once, as of the
// committed state ctx reads, for starts evaluated at height.
func (k Keeper) buildRouteTable(ctx context.Context, height int64) (*routeTable, error) {
	rc, err := k.loadRouteContext(ctx, height)
	if err != nil {
		return nil, err
	}
	t := &routeTable{rc: rc, height: height, serving: map[string][]int32{}}
	if err := k.EpochMembers.Walk(ctx, nil, func(_ uint32, m types.EpochMember) (bool, error) {
		t.members = append(t.members, m)
		return false, nil
	}); err != nil {
		return nil, walkGroupError(err)
	}
	for i, m := range t.members {
		for _, model := range m.Models {
			list := t.serving[model]
			// The same check as admitMember's, so an unsorted list (which
			// genesis refuses) still gives the answer consensus would.
			if _, served := slices.BinarySearch(m.Models, model); !served || (len(list) > 0 && list[len(list)-1] == int32(i)) {
				continue
			}
			t.serving[model] = append(list, int32(i))
		}
	}
	t.routes = routecache.NewMemo[string, modelRoute](len(t.serving))
	t.status = map[string]types.ParticipantStatus{}
	if err := k.Participants.Walk(ctx, nil, func(_ sdk.AccAddress, p types.Participant) (bool, error) {
		t.status[p.Address] = p.Status
		return false, nil
	}); err != nil {
		return nil, fmt.Errorf("walk participants: %w", err)
	}
	return t, nil
}

// route is model's selection: admission over the members serving it, then
// stage. An error is a store or state fault, never an answer.
func (t *routeTable) route(ctx context.Context, k Keeper, stage HealthStage, model string) (modelRoute, error) {
	serving, served := t.serving[model]
	if !served {
		return modelRoute{}, nil
	}
	return t.routes.Get(model, func() (modelRoute, error) {
		status := func(m types.EpochMember) (types.ParticipantStatus, error) {
			if s, ok := t.status[m.Address]; ok {
				return s, nil
			}
			return k.memberStatus(ctx, m)
		}
		var pool []types.Candidate
		for _, i := range serving {
			m := t.members[i]
			switch err := admitMember(t.rc, m, model, status); {
			case err == nil:
				pool = append(pool, types.Candidate{Member: m, Weight: m.Weight})
			case !isRefusal(err):
				return modelRoute{}, walkGroupError(err)
			}
		}
		if len(pool) == 0 {
			return modelRoute{}, nil
		}
		sel, err := applyHealthStage(ctx, stage, model, t.height, pool)
		if err != nil {
			return modelRoute{}, err
		}
		return modelRoute{sel: sel, weights: poolWeights(sel.Pool)}, nil
	})
}

// RandomExecutorCommitted is RandomExecutor for a query over the committed
// state of the block at committed, for a start in the block after it. It
// gives RandomExecutor's answer for the same state and seed; the route table
// it draws from is kept per committed height, so ctx must read exactly that
// committed state, as baseapp's query contexts do. Consensus code calls
// RandomExecutor. Any fault is answered by RandomExecutor itself.
func (k Keeper) RandomExecutorCommitted(ctx context.Context, model string, seed uint64, committed int64) (Draw, error) {
	next := committed + 1
	if err := types.ValidateModel(model); err != nil {
		return k.RandomExecutor(ctx, model, seed, next)
	}
	stage, generation := k.seams.health, k.seams.stageGeneration
	t, err := k.seams.routes.Get(routecache.Key{Height: committed, Generation: generation}, func() (*routeTable, error) {
		return k.buildRouteTable(ctx, next)
	})
	if err != nil {
		return k.RandomExecutor(ctx, model, seed, next)
	}
	r, err := t.route(ctx, k, stage, model)
	if err != nil {
		return k.RandomExecutor(ctx, model, seed, next)
	}
	if len(r.sel.Pool) == 0 {
		return Draw{}, noExecutor(model)
	}
	return drawFrom(r.sel, r.weights, seed)
}
