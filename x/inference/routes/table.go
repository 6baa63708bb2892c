package routes

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"

	storetypes "github.com/cosmos/cosmos-sdk/store/v2/types"

	"github.com/inferenced/inferenced/x/inference/keeper"
	"github.com/inferenced/inferenced/x/inference/selection"
	"github.com/inferenced/inferenced/x/inference/types"
)

// table is the selection input of one committed height: the epoch group
// and the participants' statuses, each read in one pass over the store,
// and each model's selection, computed on its first query and kept.
// Everything it holds is a function of the committed state of that height
// (and of the evaluated height, one above it), so it is never stale for a
// query at that height. Consensus code never reads it.
type table struct {
	rc      selection.Context
	height  int64 // the evaluated height: committed + 1
	members []types.EpochMember
	// serving lists, per model, the members (indexes into members) that
	// pass the admission's model check, in group order.
	serving map[string][]int32
	// status is each participant's status by address string; a member not
	// found here is read through the keeper, as consensus reads it.
	status map[string]types.ParticipantStatus
	routes *memo[string, route]
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

// route is one model's selection at the table's height, ready to draw
// (empty: nobody is admitted).
type route struct {
	empty bool
	draw  selection.Table
}

// build reads the group and the statuses once, as of the committed state
// ctx reads, for starts evaluated at height. A record whose stored bytes
// equal the ones base decoded at the same position is taken from base
// instead of decoded again: equal bytes decode to equal values, so base may
// be any earlier table (or nil).
func build(ctx context.Context, k keeper.Keeper, height int64, base *table) (*table, error) {
	rc, err := k.RouteContext(ctx, height)
	if err != nil {
		return nil, err
	}
	if base == nil {
		base = &table{}
	}
	t := &table{rc: rc, height: height, serving: map[string][]int32{},
		members: make([]types.EpochMember, 0, len(base.members)), memberBytes: make([][]byte, 0, len(base.members)),
		participants: make([]participantStatus, 0, len(base.participants)), participantBytes: make([][]byte, 0, len(base.participants)),
	}
	err = eachStored(ctx, k, k.EpochMembers.GetPrefix(), func(i int, bz []byte) error {
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
		return nil, keeper.WalkGroupError(err)
	}
	t.indexServing()
	t.routes = newMemo[string, route](len(t.serving))
	err = eachStored(ctx, k, k.Participants.GetPrefix(), func(i int, bz []byte) error {
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

// indexServing lists, per model, the members serving it in group order.
func (t *table) indexServing() {
	for i, m := range t.members {
		for _, model := range m.Models {
			list := t.serving[model]
			// The same check as admission's, so an unsorted list (which
			// genesis refuses) still gives the answer consensus would.
			if _, served := slices.BinarySearch(m.Models, model); !served || (len(list) > 0 && list[len(list)-1] == int32(i)) {
				continue
			}
			t.serving[model] = append(list, int32(i))
		}
	}
}

// eachStored calls each with the position and stored bytes of every value
// under prefix, in key order (a collection's walk order), read through
// ctx's store and metered as a walk is. bz is valid only during the call.
func eachStored(ctx context.Context, k keeper.Keeper, prefix []byte, each func(i int, bz []byte) error) (err error) {
	it, err := k.StoreService().OpenKVStore(ctx).Iterator(prefix, storetypes.PrefixEndBytes(prefix))
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
// the health stage. An error is a store or state fault, never an answer.
func (t *table) route(ctx context.Context, k keeper.Keeper, model string) (route, error) {
	serving, served := t.serving[model]
	if !served {
		return route{empty: true}, nil
	}
	return t.routes.Get(model, func() (route, error) {
		status := func(m types.EpochMember) (types.ParticipantStatus, error) {
			if s, ok := t.status[m.Address]; ok {
				return s, nil
			}
			return k.MemberStatus(ctx, m)
		}
		pool, err := selection.Pool(t.rc, model, status, func(admit func(types.EpochMember) error) error {
			for _, i := range serving {
				if err := admit(t.members[i]); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return route{}, keeper.WalkGroupError(err)
		}
		if len(pool) == 0 {
			return route{empty: true}, nil
		}
		filter, err := k.HealthFilter(ctx, t.height)
		if err != nil {
			return route{}, err
		}
		sel, err := selection.Health(model, pool, filter)
		if err != nil {
			return route{}, err
		}
		return route{draw: selection.NewTable(sel)}, nil
	})
}
