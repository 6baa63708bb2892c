// Package escrow holds the bonds of transfer agents and participants: a
// bond moves into the x/inference module account on registration, the
// holder asks to leave in epoch E and is indexed (E+1, address), and the
// boundary that starts E+1 releases exactly the holders keyed E+1. Both
// kinds of holder use this one rule; each keeps its own records.
package escrow

import (
	"context"
	"fmt"

	"cosmossdk.io/collections"
	errorsmod "cosmossdk.io/errors"

	sdk "github.com/cosmos/cosmos-sdk/types"
	sdkerrors "github.com/cosmos/cosmos-sdk/types/errors"
	authtypes "github.com/cosmos/cosmos-sdk/x/auth/types"

	"github.com/inferenced/inferenced/x/inference/types"
)

// ModuleAddress is the x/inference module account, which holds every bond.
func ModuleAddress() sdk.AccAddress { return authtypes.NewModuleAddress(types.ModuleName) }

// Escrow moves bonds through x/bank.
type Escrow struct{ bank types.BankKeeper }

// New is the escrow over bank.
func New(bank types.BankKeeper) Escrow { return Escrow{bank: bank} }

// Lock moves bond from addr to the module account. An address that may
// not receive funds (a module account, via governance) is refused: its bond
// could never be returned, and the release boundary would fail the block.
func (e Escrow) Lock(ctx context.Context, addr sdk.AccAddress, bond sdk.Coin, what string) error {
	if e.bank.BlockedAddr(addr) {
		return errorsmod.Wrapf(sdkerrors.ErrUnauthorized, "%s may not receive funds, so it could never get its bond back", addr)
	}
	if err := e.bank.SendCoinsFromAccountToModule(ctx, addr, types.ModuleName, sdk.NewCoins(bond)); err != nil {
		return errorsmod.Wrapf(err, "lock %s bond %s", what, bond)
	}
	return nil
}

// Return sends bond back from the module account. A failure is an
// invariant breach (the module account covers every bond), so callers fail
// the block with it.
func (e Escrow) Return(ctx context.Context, addr sdk.AccAddress, bond sdk.Coin) error {
	if types.Unbonded(bond) { // a participant carried over from version 3
		return nil
	}
	if err := e.bank.SendCoinsFromModuleToAccount(ctx, types.ModuleName, addr, sdk.NewCoins(bond)); err != nil {
		return fmt.Errorf("return bond %s to %s: %w", bond, addr, err)
	}
	return nil
}

// MayHold reports whether addr may hold a bond: one that may not receive
// funds could never get it back.
func (e Escrow) MayHold(addr sdk.AccAddress) bool { return !e.bank.BlockedAddr(addr) }

// Held is what the module account holds in denom.
func (e Escrow) Held(ctx context.Context, denom string) sdk.Coin {
	return e.bank.GetBalance(ctx, ModuleAddress(), denom)
}

// Leaving is an index of the holders that asked to leave, keyed by the
// epoch whose start releases them.
type Leaving = collections.KeySet[collections.Pair[uint64, sdk.AccAddress]]

// LeavingKey is the leaving-index entry of a holder that left in epoch
// leavingEpoch: the start of the next epoch releases it.
func LeavingKey(leavingEpoch uint64, addr sdk.AccAddress) collections.Pair[uint64, sdk.AccAddress] {
	return collections.Join(leavingEpoch+1, addr)
}

// Schedule indexes addr, leaving in epoch current, for release when the
// next epoch starts, which it returns.
func Schedule(ctx context.Context, leaving Leaving, current uint64, addr sdk.AccAddress) (uint64, error) {
	key := LeavingKey(current, addr)
	if err := leaving.Set(ctx, key); err != nil {
		return 0, fmt.Errorf("index leaving %s: %w", addr, err)
	}
	return key.K1(), nil
}

// ReleaseDue runs release for exactly the holders keyed index in leaving,
// unindexes them and lowers count by their number. release removes the
// holder's record and returns its bond.
func ReleaseDue(ctx context.Context, leaving Leaving, count collections.Item[uint64], index uint64, what string,
	release func(sdk.AccAddress) error,
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
