package keeper

import (
	"context"
	"errors"
	"fmt"

	"cosmossdk.io/collections"

	sdk "github.com/cosmos/cosmos-sdk/types"

	"github.com/inferenced/inferenced/x/inference/types"
	"github.com/inferenced/inferenced/x/inference/verdict"
)

// AttestedSamples maps the packed samples of a health bundle to executors,
// in group order. Samples about another epoch than the current one are
// dropped: the group they index has been replaced, so a boundary between
// epochs never applies a verdict to the wrong executor.
func (k Keeper) AttestedSamples(ctx context.Context, epochIndex uint64, packed []byte) ([]AttestedSample, error) {
	epoch, err := k.currentEpoch(ctx)
	if errors.Is(err, types.ErrNoEpoch) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if epoch.Index != epochIndex {
		return nil, nil
	}
	n := epoch.Members
	if err := verdict.Check(packed, int(n)); err != nil {
		return nil, fmt.Errorf("bundle samples: %w", err)
	}
	// An ok for an executor without a breaker record or a queued outcome
	// changes nothing: only misses and the executors the breaker holds or
	// is about to hold are mapped to addresses.
	held, err := k.heldIndices(ctx)
	if err != nil {
		return nil, err
	}
	var out []AttestedSample
	for i := uint32(0); i < n; i++ {
		v := verdict.At(packed, int(i))
		if v == verdict.Unknown || (v == verdict.OK && !held[i]) {
			continue
		}
		m, err := k.EpochMembers.Get(ctx, i)
		if err != nil {
			return nil, fmt.Errorf("epoch member %d: %w", i, err)
		}
		addr, err := k.addressCodec.StringToBytes(m.Address)
		if err != nil {
			return nil, fmt.Errorf("epoch member %d address: %w", i, err)
		}
		out = append(out, AttestedSample{Executor: sdk.AccAddress(addr), Miss: v == verdict.Miss})
	}
	return out, nil
}

// heldIndices are the group indices of the executors the breaker holds a
// record on or has outcomes queued for (those whose ok the step can
// change); the map is only looked up.
func (k Keeper) heldIndices(ctx context.Context) (map[uint32]bool, error) {
	addrs, err := k.health.Held(ctx)
	if err != nil {
		return nil, err
	}
	held := make(map[uint32]bool, len(addrs))
	for _, addr := range addrs {
		i, err := k.EpochMemberIndex.Get(ctx, addr)
		if errors.Is(err, collections.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("look up held executor %s: %w", addr, err)
		}
		held[i] = true
	}
	return held, nil
}
