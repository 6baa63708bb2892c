package breakerstore_test

import (
	"context"
	"fmt"
	"slices"

	"cosmossdk.io/collections"

	sdk "github.com/cosmos/cosmos-sdk/types"

	"github.com/inferenced/inferenced/x/inference/types"
)

// executor is one epoch member and its stats this epoch.
type executor struct {
	member           types.EpochMember
	finished, missed uint64
}

// group is the epoch group as the keeper stores it, in address order: what
// the store reads (breakerstore.Reads).
type group struct {
	execs []*executor
	epoch uint64
}

func (g *group) EpochIndex(context.Context) (uint64, error) { return g.epoch, nil }

func (g *group) MemberIndex(_ context.Context, a sdk.AccAddress) (uint32, bool, error) {
	for i, e := range g.execs {
		if e.member.Address == bechOf(a) {
			return uint32(i), true, nil
		}
	}
	return 0, false, nil
}

func (g *group) MemberAt(_ context.Context, i uint32) (types.EpochMember, error) {
	if int(i) >= len(g.execs) {
		return types.EpochMember{}, fmt.Errorf("epoch member %d: %w", i, collections.ErrNotFound)
	}
	return g.execs[i].member, nil
}

func (g *group) ModelWeight(_ context.Context, model string) (uint64, error) {
	var w uint64
	for _, e := range g.execs {
		if slices.Contains(e.member.Models, model) {
			w += e.member.Weight
		}
	}
	return w, nil
}

func (g *group) EpochSuccesses(_ context.Context, a sdk.AccAddress) (uint64, error) {
	if e := g.find(a); e != nil {
		return e.finished, nil
	}
	return 0, nil
}

func (g *group) find(a sdk.AccAddress) *executor {
	for _, e := range g.execs {
		if e.member.Address == bechOf(a) {
			return e
		}
	}
	return nil
}

func bechOf(a sdk.AccAddress) string {
	s, err := ac.BytesToString(a)
	if err != nil {
		panic(err)
	}
	return s
}
