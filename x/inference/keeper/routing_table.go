package keeper

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"

	errorsmod "cosmossdk.io/errors"
	storetypes "cosmossdk.io/store/types"

	sdk "github.com/cosmos/cosmos-sdk/types"

	"github.com/inferenced/inferenced/x/inference/lottery"
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
// pass over the store, and each model's selection, computed on its first
// query and kept. Everything it holds is a function of the committed state
// of that height (and of the evaluated height, one above it), so it is never
// stale for a query at that height. Consensus code never reads it.
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
	// The stored bytes each member and participant was decoded from, in
	// store order: the next height's build decodes only what differs.
	memberBytes      [][]byte
	participantBytes [][]byte
	participants     []participantStatus
}

type participantStatus struct {
	address string
	status  types.ParticipantStatus
}

// modelRoute is one model's selection at the table's height, ready to draw;
// drawErr is the draw's refusal for every seed (a weight total the lottery
// refuses).
type modelRoute struct {
	sel     Selection
	table   lottery.Table
	drawErr error
}

// buildRouteTable reads the group and the statuses once, as of the
// committed state ctx reads, for starts evaluated at height. A record whose
// stored bytes equal the ones base decoded at the same position is taken
// from base instead of decoded again: equal bytes decode to equal values, so
// base may be any earlier table (or nil).
func (k Keeper) buildRouteTable(ctx context.Context, height int64, base *routeTable) (*routeTable, error) {
	rc, err := k.loadRouteContext(ctx, height)
	if err != nil {
		return nil, err
	}
	if base == nil {
		base = &routeTable{}
	}
	t := &routeTable{rc: rc, height: height, serving: map[string][]int32{},
		members: make([]types.EpochMember, 0, len(base.members)), memberBytes: make([][]byte, 0, len(base.members)),
		participants: make([]participantStatus, 0, len(base.participants)), participantBytes: make([][]byte, 0, len(base.participants)),
	}
	err = k.eachStored(ctx, k.EpochMembers.GetPrefix(), func(i int, bz []byte) error {
		if i < len(base.memberBytes) && bytes.Equal(bz, base.memberBytes[i]) {
			t.members, t.memberBytes = append(t.members, base.members[i]), append(t.memberBytes, base.memberBytes[i])
			return nil
		}
		m, err := k.EpochMembers.ValueCodec().Decode(bz)
		if err != nil {
			return err
		}
		t.members, t.memberBytes = append(t.members, m), append(t.memberBytes, bytes.Clone(bz))
		return nil
	})
	if err != nil {
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
	err = k.eachStored(ctx, k.Participants.GetPrefix(), func(i int, bz []byte) error {
		if i < len(base.participantBytes) && bytes.Equal(bz, base.participantBytes[i]) {
			t.participants, t.participantBytes = append(t.participants, base.participants[i]), append(t.participantBytes, base.participantBytes[i])
			return nil
		}
		p, err := k.Participants.ValueCodec().Decode(bz)
		if err != nil {
			return err
		}
		t.participants = append(t.participants, participantStatus{address: p.Address, status: p.Status})
		t.participantBytes = append(t.participantBytes, bytes.Clone(bz))
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("walk participants: %w", err)
	}
	t.status = make(map[string]types.ParticipantStatus, len(t.participants))
	for _, p := range t.participants {
		t.status[p.address] = p.status
	}
	return t, nil
}

// eachStored calls each with the position and stored bytes of every value
// under prefix, in key order (a collection's walk order), read through
// ctx's store and metered as a walk is. bz is valid only during the call.
func (k Keeper) eachStored(ctx context.Context, prefix []byte, each func(i int, bz []byte) error) (err error) {
	it, err := k.storeService.OpenKVStore(ctx).Iterator(prefix, storetypes.PrefixEndBytes(prefix))
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, it.Close()) }()
	for i := 0; it.Valid(); it.Next() {
		if err := each(i, it.Value()); err != nil {
			return err
		}
		i++
	}
	return nil
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
		table, err := lottery.NewTable(poolWeights(sel.Pool))
		return modelRoute{sel: sel, table: table, drawErr: err}, nil
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
	k.seams.noteQuery(committed)
	r, err := k.committedRoute(ctx, model, committed)
	if err != nil { // a fault, or a height too old to keep: the per-member path on the caller's meter
		return k.RandomExecutor(ctx, model, seed, next)
	}
	switch {
	case len(r.sel.Pool) == 0:
		return Draw{}, noExecutor(model)
	case r.drawErr != nil: // as drawFrom reports it
		return Draw{}, errorsmod.Wrap(types.ErrNoExecutor, r.drawErr.Error())
	}
	i := r.table.Draw(seed)
	return Draw{Picked: r.sel.Pool[i], Candidates: len(r.sel.Pool), TotalWeight: r.table.Total(), Fallback: r.sel.Fallback}, nil
}

// committedRoute is model's route at committed, from that height's table
// (built now if it is not kept yet).
func (k Keeper) committedRoute(ctx context.Context, model string, committed int64) (modelRoute, error) {
	stage, generation := k.seams.health, k.seams.stageGeneration
	// The table serves every query at this height, so no one query pays for
	// it: it is read on a meter of its own, without a limit (a build is at
	// most one per kept height, bounded by the group and the registry), and
	// a query-gas-limit the per-member path fits keeps being answered.
	shared := sdk.UnwrapSDKContext(ctx).WithGasMeter(storetypes.NewInfiniteGasMeter())
	t, err := k.seams.routes.Get(routecache.Key{Height: committed, Generation: generation}, func(base *routeTable, _ bool) (*routeTable, error) {
		return k.buildRouteTable(shared, committed+1, base)
	})
	if err != nil {
		return modelRoute{}, err
	}
	return t.route(shared, k, stage, model)
}

// noteQuery records a client query at committed: queried is the highest
// height queried (a query at an old height does not lower it).
func (s *seams) noteQuery(committed int64) {
	for {
		last := s.queried.Load()
		if committed <= last || s.queried.CompareAndSwap(last, committed) {
			return
		}
	}
}

// warmQueriedWithin is how recent a client query must be for WarmRouteTables
// to build ahead: a node no client asks builds nothing.
const warmQueriedWithin = 10

// WarmRouteTables builds, ahead of the queries, the route table of the
// committed height ctx reads and the routes of the models queried at the
// table before it, so that the first GetRandomExecutor of a block finds them
// ready. It does nothing on a node no client has queried in the last
// warmQueriedWithin heights. ctx must be a query context (the app calls it
// after each commit, off the consensus path); the answers are those a query
// would build, so warming changes what a query costs, never what it says.
func (k Keeper) WarmRouteTables(ctx context.Context) error {
	committed := sdk.UnwrapSDKContext(ctx).BlockHeight()
	if committed-k.seams.queried.Load() > warmQueriedWithin {
		return nil
	}
	prev, ok := k.seams.routes.Latest()
	if !ok {
		return nil
	}
	for _, model := range prev.routes.Keys() {
		if _, err := k.committedRoute(ctx, model, committed); err != nil {
			return fmt.Errorf("warm route of %q at %d: %w", model, committed, err)
		}
	}
	return nil
}
