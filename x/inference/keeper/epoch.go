package keeper

import (
	"context"
	"errors"
	"fmt"

	"cosmossdk.io/collections"

	sdk "github.com/cosmos/cosmos-sdk/types"

	"github.com/inferenced/inferenced/x/inference/types"
)

// currentEpoch returns the running epoch, or ErrNoEpoch before the first block.
func (k Keeper) currentEpoch(ctx context.Context) (types.Epoch, error) {
	epoch, err := k.Epoch.Get(ctx)
	if errors.Is(err, collections.ErrNotFound) {
		return types.Epoch{}, types.ErrNoEpoch
	}
	if err != nil {
		return types.Epoch{}, fmt.Errorf("load epoch: %w", err)
	}
	return epoch, nil
}

// epochIndexOrZero is the current epoch index, 0 before the first block
// (genesis transactions run then).
func (k Keeper) epochIndexOrZero(ctx context.Context) (uint64, error) {
	epoch, err := k.currentEpoch(ctx)
	if errors.Is(err, types.ErrNoEpoch) {
		return 0, nil
	}
	return epoch.Index, err
}

// BeginBlock opens epoch 1 on the first block and a new epoch whenever the
// current one has run epoch_length blocks.
func (k Keeper) BeginBlock(ctx context.Context) error {
	height := sdk.UnwrapSDKContext(ctx).BlockHeight()
	epoch, err := k.currentEpoch(ctx)
	switch {
	case errors.Is(err, types.ErrNoEpoch):
		return k.startEpoch(ctx, 1, height)
	case err != nil:
		return err
	}
	params, err := k.Params.Get(ctx)
	if err != nil {
		return fmt.Errorf("load params: %w", err)
	}
	if height >= params.NextEpochHeight(epoch) {
		return k.startEpoch(ctx, epoch.Index+1, height)
	}
	return nil
}

// startEpoch is the one epoch boundary hook: it resets every participant's
// stats and INACTIVE status, clears all circuit-breaker state, snapshots the new epoch group (sorted by address
// bytes, the index vote extensions use), returns the bonds of the
// participants (before the snapshot, which leaves them out) and transfer
// agents that asked to leave in the previous epoch. Agent standings reset
// lazily (x/inference/agents), without a walk.
func (k Keeper) startEpoch(ctx context.Context, index uint64, height int64) error {
	var previous uint32
	switch old, err := k.currentEpoch(ctx); {
	case err == nil:
		previous = old.Members
	case !errors.Is(err, types.ErrNoEpoch):
		return err
	}
	// Departures first: a released participant is not in the new group.
	if err := k.releaseLeavingParticipants(ctx, index); err != nil {
		return err
	}
	participants, err := k.resetParticipants(ctx)
	if err != nil {
		return err
	}
	if err := k.breaker.Clear(ctx); err != nil {
		return err
	}
	if err := k.EpochMembers.Clear(ctx, nil); err != nil {
		return fmt.Errorf("clear epoch members: %w", err)
	}
	if err := k.EpochMemberIndex.Clear(ctx, nil); err != nil {
		return fmt.Errorf("clear epoch member index: %w", err)
	}
	var totalWeight uint64
	members := uint32(0)
	var group []types.EpochMember
	for _, p := range participants {
		if p.Status != types.PARTICIPANT_STATUS_ACTIVE {
			continue
		}
		addr, err := k.addressCodec.StringToBytes(p.Address)
		if err != nil {
			return fmt.Errorf("participant address %q: %w", p.Address, err)
		}
		member := types.EpochMember{
			Address:      p.Address,
			Weight:       p.Weight,
			Models:       p.Models,
			InferenceUrl: p.InferenceUrl,
			PocAvailable: p.PocAvailable,
		}
		if err := k.EpochMembers.Set(ctx, members, member); err != nil {
			return fmt.Errorf("store epoch member: %w", err)
		}
		if err := k.EpochMemberIndex.Set(ctx, addr, members); err != nil {
			return fmt.Errorf("store epoch member index: %w", err)
		}
		members++
		group = append(group, member)
		totalWeight = types.AddWeight(totalWeight, p.Weight)
	}
	if err := k.storeModelWeights(ctx, group); err != nil {
		return err
	}
	epoch := types.Epoch{Index: index, StartHeight: height, PreviousMembers: previous, Members: members}
	if err := k.Epoch.Set(ctx, epoch); err != nil {
		return fmt.Errorf("store epoch: %w", err)
	}
	sdkCtx := sdk.UnwrapSDKContext(ctx)
	sdkCtx.Logger().Debug("epoch started", "module", types.ModuleName, "epoch", index, "height", height, "members", members)
	if err := sdkCtx.EventManager().EmitTypedEvent(&types.EventEpochStarted{
		EpochIndex: index, StartHeight: height, Members: members, TotalWeight: totalWeight,
	}); err != nil {
		return fmt.Errorf("emit epoch event: %w", err)
	}
	return k.agents.ReleaseLeaving(ctx, index)
}

// resetParticipants zeroes every participant's epoch stats and turns
// INACTIVE back to ACTIVE, writing only records that change. It returns all
// participants in address-byte order.
func (k Keeper) resetParticipants(ctx context.Context) ([]types.Participant, error) {
	var all []types.Participant
	if err := k.Participants.Walk(ctx, nil, func(_ sdk.AccAddress, p types.Participant) (bool, error) {
		all = append(all, p)
		return false, nil
	}); err != nil {
		return nil, fmt.Errorf("walk participants: %w", err)
	}
	for i := range all {
		p := &all[i]
		changed := p.CurrentEpochStats != (types.CurrentEpochStats{}) || p.Status == types.PARTICIPANT_STATUS_INACTIVE
		if !changed {
			continue
		}
		p.CurrentEpochStats = types.CurrentEpochStats{}
		if p.Status == types.PARTICIPANT_STATUS_INACTIVE {
			p.Status = types.PARTICIPANT_STATUS_ACTIVE
		}
		if err := k.SetParticipant(ctx, *p); err != nil {
			return nil, err
		}
	}
	return all, nil
}

// VoteGroup is the epoch, and its group size, that the vote extensions of
// the block at voteHeight attest about. Extensions are made from the state
// before that block, so if the block opened a new epoch they are about the
// previous one. It gives the same answer when asked from the state before
// voteHeight (VerifyVoteExtension) and from the state after it (the next
// block's proposal checks).
func (k Keeper) VoteGroup(ctx context.Context, voteHeight int64) (uint64, int, error) {
	epoch, err := k.currentEpoch(ctx)
	if err != nil {
		return 0, 0, err
	}
	if epoch.StartHeight == voteHeight && epoch.Index > 1 {
		return epoch.Index - 1, int(epoch.PreviousMembers), nil
	}
	return epoch.Index, int(epoch.Members), nil
}

// EpochGroup returns the current epoch group in index order.
func (k Keeper) EpochGroup(ctx context.Context) (types.EpochGroup, error) {
	epoch, err := k.currentEpoch(ctx)
	if err != nil {
		return types.EpochGroup{}, err
	}
	group := types.EpochGroup{EpochIndex: epoch.Index}
	err = k.EpochMembers.Walk(ctx, nil, func(_ uint32, m types.EpochMember) (bool, error) {
		group.Members = append(group.Members, m)
		return false, nil
	})
	if err != nil {
		return types.EpochGroup{}, fmt.Errorf("walk epoch group: %w", err)
	}
	return group, nil
}
