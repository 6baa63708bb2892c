package keeper

import (
	"context"
	"errors"
	"fmt"

	"cosmossdk.io/collections"

	sdk "github.com/cosmos/cosmos-sdk/types"

	"github.com/inferenced/inferenced/x/inference/types"
)

// InitGenesis loads a validated genesis whose transfer-agent and
// participant bonds the module account holds. bundle_v3_height is stored
// as given (0 and 1 both mean HEALTH3 from the first block). The expiry queue is rebuilt from the STARTED
// inferences, the prune index from the closed ones (genesis_inferences.go), the member index and
// model weights from the group, the participant and agent counts and leaving indexes from their
// records, and the breaker's indexes from
// its records (breakerstore.Store).
func (k Keeper) InitGenesis(ctx context.Context, gs types.GenesisState) error {
	if err := gs.Validate(k.addressCodec); err != nil {
		return fmt.Errorf("invalid x/inference genesis: %w", err)
	}
	if err := k.checkBondsHeld(ctx, gs); err != nil {
		return fmt.Errorf("invalid x/inference genesis: %w", err)
	}
	if err := k.Params.Set(ctx, gs.Params); err != nil {
		return fmt.Errorf("store params: %w", err)
	}
	if err := k.BundleV3Height.Set(ctx, gs.BundleV3Height); err != nil {
		return fmt.Errorf("store bundle_v3_height: %w", err)
	}
	if err := k.importParticipants(ctx, gs.Participants); err != nil {
		return err
	}
	if gs.Epoch != nil {
		if err := k.Epoch.Set(ctx, *gs.Epoch); err != nil {
			return fmt.Errorf("store epoch: %w", err)
		}
	}
	if gs.EpochGroup != nil {
		for i, m := range gs.EpochGroup.Members {
			addr, err := k.addressCodec.StringToBytes(m.Address)
			if err != nil {
				return fmt.Errorf("member address: %w", err)
			}
			if err := k.EpochMembers.Set(ctx, uint32(i), m); err != nil {
				return fmt.Errorf("store epoch member: %w", err)
			}
			if err := k.EpochMemberIndex.Set(ctx, addr, uint32(i)); err != nil {
				return fmt.Errorf("store epoch member index: %w", err)
			}
		}
		if err := k.storeModelWeights(ctx, gs.EpochGroup.Members); err != nil {
			return err
		}
	}
	if err := k.inferences.InitGenesis(ctx, gs); err != nil {
		return err
	}
	if err := k.agents.InitGenesis(ctx, gs.TransferAgents); err != nil {
		return err
	}
	return k.breaker.InitGenesis(ctx, gs)
}

// ExportGenesis writes the whole module state.
func (k Keeper) ExportGenesis(ctx context.Context) (*types.GenesisState, error) {
	params, err := k.Params.Get(ctx)
	if err != nil {
		return nil, fmt.Errorf("load params: %w", err)
	}
	gs := &types.GenesisState{Params: params}
	switch v3, err := k.BundleV3Height.Get(ctx); {
	case errors.Is(err, collections.ErrNotFound): // a store from before version 6: 0, HEALTH3 from the first block of a chain started from it
	case err != nil:
		return nil, fmt.Errorf("load bundle_v3_height: %w", err)
	default:
		gs.BundleV3Height = v3
	}
	if err := k.Participants.Walk(ctx, nil, func(_ sdk.AccAddress, p types.Participant) (bool, error) {
		gs.Participants = append(gs.Participants, p)
		return false, nil
	}); err != nil {
		return nil, fmt.Errorf("walk participants: %w", err)
	}
	epoch, err := k.currentEpoch(ctx)
	switch {
	case errors.Is(err, types.ErrNoEpoch):
	case err != nil:
		return nil, err
	default:
		gs.Epoch = &epoch
		group, err := k.EpochGroup(ctx)
		if err != nil {
			return nil, err
		}
		gs.EpochGroup = &group
	}
	if err := k.inferences.ExportGenesis(ctx, gs); err != nil {
		return nil, err
	}
	if err := k.agents.ExportGenesis(ctx, gs); err != nil {
		return nil, err
	}
	if err := k.breaker.ExportGenesis(ctx, gs); err != nil {
		return nil, err
	}
	return gs, nil
}
