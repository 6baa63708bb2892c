package keeper

import (
	"context"
	"fmt"

	"cosmossdk.io/collections"

	sdk "github.com/cosmos/cosmos-sdk/types"

	"github.com/inferenced/inferenced/x/inference/types"
)

// restoreHealth stores a breaker record with its gate and cooldown entry,
// under the canonical spelling of its address (selection matches gates by
// the members' addresses).
func (k Keeper) restoreHealth(ctx context.Context, h types.ExecutorHealth) error {
	addr, err := k.addressCodec.StringToBytes(h.Address)
	if err != nil {
		return fmt.Errorf("breaker record address: %w", err)
	}
	if h.Address, err = k.addressCodec.BytesToString(addr); err != nil {
		return fmt.Errorf("encode breaker record address: %w", err)
	}
	known, err := k.ExecutorHealth.Has(ctx, addr)
	if err != nil {
		return fmt.Errorf("look up breaker record: %w", err)
	}
	if err := k.ExecutorHealth.Set(ctx, addr, h); err != nil {
		return fmt.Errorf("store breaker record: %w", err)
	}
	if !known {
		if err := k.countHealthRecords(ctx, +1); err != nil {
			return err
		}
	}
	if g, ok := gateOf(toBreaker(h)); ok {
		if err := k.HealthGate.Set(ctx, h.Address, g); err != nil {
			return fmt.Errorf("store health gate: %w", err)
		}
	}
	if h.State == types.HEALTH_STATE_EXCLUDED {
		eligible := h.ExcludedAt + int64(h.CooldownBlocks)
		if err := k.CooldownIndex.Set(ctx, collections.Join(eligible, sdk.AccAddress(addr))); err != nil {
			return fmt.Errorf("index cooldown: %w", err)
		}
	}
	return nil
}

func (k Keeper) initHealthGenesis(ctx context.Context, gs types.GenesisState) error {
	for _, h := range gs.ExecutorHealth {
		if err := k.restoreHealth(ctx, h); err != nil {
			return err
		}
	}
	for _, p := range gs.PendingSamples {
		addr, err := k.addressCodec.StringToBytes(p.Executor)
		if err != nil {
			return fmt.Errorf("pending sample executor: %w", err)
		}
		if err := k.PendingSamples.Set(ctx, collections.Join(sdk.AccAddress(addr), p.Sequence), p.Sample); err != nil {
			return fmt.Errorf("store pending sample: %w", err)
		}
		if err := k.markSamplesQueued(ctx); err != nil {
			return err
		}
	}
	if err := k.SampleSequence.Set(ctx, gs.SampleSequence); err != nil {
		return fmt.Errorf("store sample sequence: %w", err)
	}
	return nil
}

func (k Keeper) exportHealthGenesis(ctx context.Context, gs *types.GenesisState) error {
	if err := k.ExecutorHealth.Walk(ctx, nil, func(_ sdk.AccAddress, h types.ExecutorHealth) (bool, error) {
		gs.ExecutorHealth = append(gs.ExecutorHealth, h)
		return false, nil
	}); err != nil {
		return fmt.Errorf("walk breaker records: %w", err)
	}
	if err := k.PendingSamples.Walk(ctx, nil, func(key collections.Pair[sdk.AccAddress, uint64], s types.PendingSample) (bool, error) {
		executor, err := k.addressCodec.BytesToString(key.K1())
		if err != nil {
			return true, fmt.Errorf("encode executor: %w", err)
		}
		gs.PendingSamples = append(gs.PendingSamples, types.PendingSampleEntry{Executor: executor, Sequence: key.K2(), Sample: s})
		return false, nil
	}); err != nil {
		return fmt.Errorf("walk pending samples: %w", err)
	}
	seq, err := k.SampleSequence.Peek(ctx)
	if err != nil {
		return fmt.Errorf("load sample sequence: %w", err)
	}
	gs.SampleSequence = seq
	return nil
}
