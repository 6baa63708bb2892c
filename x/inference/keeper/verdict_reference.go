package keeper

import (
	"context"
	"errors"
	"fmt"

	"cosmossdk.io/collections"

	sdk "github.com/cosmos/cosmos-sdk/types"

	"github.com/inferenced/inferenced/x/inference/verdict"
	"github.com/inferenced/inferenced/x/inference/verdictref"
)

// VerdictReference is the packing the verdicts of the vote extensions of
// the block at voteHeight, about epoch's group of n, are relative to
// (verdictref.Reference.For): nil, every verdict as it is, before
// bundle_v3_height and whenever the chain has no recent samples about
// that group. ExtendVote reads it from the state before the block at
// voteHeight, the next block's proposal handlers from the state after it;
// both get the same answer (TestVerdictReferenceIsTheSameBeforeAndAfterTheBlock).
func (k Keeper) VerdictReference(ctx context.Context, voteHeight int64, epoch uint64, n int) ([]byte, error) {
	ref, err := k.loadVerdictReference(ctx)
	if err != nil {
		return nil, err
	}
	return ref.For(voteHeight, epoch, n)
}

func (k Keeper) loadVerdictReference(ctx context.Context) (verdictref.Reference, error) {
	ref, err := k.verdictRef.Get(ctx)
	switch {
	case errors.Is(err, collections.ErrNotFound):
		return verdictref.Reference{}, nil
	case err != nil:
		return verdictref.Reference{}, fmt.Errorf("load verdict reference: %w", err)
	}
	return ref, nil
}

// recordSamples makes the samples a block carried (packed, a packing of
// members, about epoch) the current reference when they differ from it,
// from bundle_v3_height on; a block without samples changes nothing. Only
// a store that cannot be read or written fails it.
func (k Keeper) recordSamples(ctx context.Context, epoch uint64, members int, packed []byte) error {
	if members <= 0 || len(packed) != verdict.PackedLen(members) {
		return nil
	}
	height := sdk.UnwrapSDKContext(ctx).BlockHeight()
	from, set, err := k.BundleV3Switch(ctx)
	if err != nil || !set || height < from {
		return err
	}
	ref, err := k.loadVerdictReference(ctx)
	if err != nil {
		return err
	}
	next, changed, err := ref.Next(height, epoch, members, packed)
	if err != nil {
		// Samples a decided bundle carried are valid (ProcessProposal),
		// so this is a bug, not input: the same on every node, so the
		// reference stays as it is everywhere and the block goes on.
		sdk.UnwrapSDKContext(ctx).Logger().Error("verdict reference not updated", "height", height, "err", err)
		return nil
	}
	if !changed {
		return nil
	}
	if err := k.verdictRef.Set(ctx, next); err != nil {
		return fmt.Errorf("store verdict reference: %w", err)
	}
	return nil
}
