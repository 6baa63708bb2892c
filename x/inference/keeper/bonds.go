package keeper

import (
	"context"
	"fmt"

	"cosmossdk.io/collections"
	errorsmod "cosmossdk.io/errors"

	sdk "github.com/cosmos/cosmos-sdk/types"
	sdkerrors "github.com/cosmos/cosmos-sdk/types/errors"

	"github.com/inferenced/inferenced/x/inference/types"
)

// The bond escrow shared by transfer agents and participants: a bond moves
// into the module account on registration, the holder asks to leave in
// epoch E and is indexed (E+1, address), and the boundary that starts E+1
// releases exactly the holders keyed E+1.

// lockBond moves bond from addr to the module account. An address that may
// not receive funds (a module account, via governance) is refused: its bond
// could never be returned, and the release boundary would fail the block.
func (k Keeper) lockBond(ctx context.Context, addr sdk.AccAddress, bond sdk.Coin, what string) error {
	if k.bank.BlockedAddr(addr) {
		return errorsmod.Wrapf(sdkerrors.ErrUnauthorized, "%s may not receive funds, so it could never get its bond back", addr)
	}
	if err := k.bank.SendCoinsFromAccountToModule(ctx, addr, types.ModuleName, sdk.NewCoins(bond)); err != nil {
		return errorsmod.Wrapf(err, "lock %s bond %s", what, bond)
	}
	return nil
}

// returnBond sends bond back from the module account. A failure is an
// invariant breach (the module account covers every bond), so callers fail
// the block with it.
func (k Keeper) returnBond(ctx context.Context, addr sdk.AccAddress, bond sdk.Coin) error {
	if types.Unbonded(bond) { // a participant carried over from version 3
		return nil
	}
	if err := k.bank.SendCoinsFromModuleToAccount(ctx, types.ModuleName, addr, sdk.NewCoins(bond)); err != nil {
		return fmt.Errorf("return bond %s to %s: %w", bond, addr, err)
	}
	return nil
}

// scheduleLeave indexes addr for release when the epoch after the current
// one starts, and returns the current epoch and that release epoch. Leaving
// needs a running epoch: leaving_epoch 0 means "serving".
func (k Keeper) scheduleLeave(ctx context.Context, leaving collections.KeySet[collections.Pair[uint64, sdk.AccAddress]],
	addr sdk.AccAddress,
) (current, release uint64, err error) {
	epoch, err := k.currentEpoch(ctx)
	if err != nil {
		return 0, 0, errorsmod.Wrap(err, "leave after the first block")
	}
	key := leavingKey(epoch.Index, addr)
	release = key.K1()
	if err := leaving.Set(ctx, key); err != nil {
		return 0, 0, fmt.Errorf("index leaving %s: %w", addr, err)
	}
	return epoch.Index, release, nil
}

// leavingKey is the leaving-index entry of a holder (agent or participant)
// that left in epoch leavingEpoch: the start of the next epoch releases it.
func leavingKey(leavingEpoch uint64, addr sdk.AccAddress) collections.Pair[uint64, sdk.AccAddress] {
	return collections.Join(leavingEpoch+1, addr)
}

// releaseDue runs release for exactly the holders keyed index in leaving,
// unindexes them and lowers count by their number. release removes the
// holder's record and returns its bond.
func (k Keeper) releaseDue(ctx context.Context, leaving collections.KeySet[collections.Pair[uint64, sdk.AccAddress]],
	count collections.Item[uint64], index uint64, what string, release func(sdk.AccAddress) error,
) (int, error) {
	var due []sdk.AccAddress
	rng := collections.NewPrefixedPairRange[uint64, sdk.AccAddress](index)
	if err := leaving.Walk(ctx, rng, func(key collections.Pair[uint64, sdk.AccAddress]) (bool, error) {
		due = append(due, key.K2())
		return false, nil
	}); err != nil {
		return 0, fmt.Errorf("walk leaving %s: %w", what, err)
	}
	if len(due) == 0 {
		return 0, nil
	}
	n, err := count.Get(ctx)
	if err != nil {
		return 0, fmt.Errorf("load %s count: %w", what, err)
	}
	if uint64(len(due)) > n {
		return 0, fmt.Errorf("%s count %d is below the %d leaving", what, n, len(due))
	}
	for _, addr := range due {
		if err := release(addr); err != nil {
			return 0, fmt.Errorf("release leaving %s %s: %w", what, addr, err)
		}
		if err := leaving.Remove(ctx, collections.Join(index, addr)); err != nil {
			return 0, fmt.Errorf("unindex leaving %s: %w", what, err)
		}
	}
	if err := count.Set(ctx, n-uint64(len(due))); err != nil {
		return 0, fmt.Errorf("store %s count: %w", what, err)
	}
	sdk.UnwrapSDKContext(ctx).Logger().Debug("bond holders left", "module", types.ModuleName, "kind", what, "epoch", index, "left", len(due))
	return len(due), nil
}
