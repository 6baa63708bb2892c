package simulation

import (
	"errors"
	"fmt"

	"cosmossdk.io/collections"

	sdk "github.com/cosmos/cosmos-sdk/types"
	authtypes "github.com/cosmos/cosmos-sdk/x/auth/types"

	"github.com/inferenced/inferenced/x/inference/keeper"
	"github.com/inferenced/inferenced/x/inference/types"
)

// bondInvariants checks the participant count and leaving index against
// the records, and that the module account holds exactly the sum of the
// agents' and participants' bonds: it holds nothing else (x/bank refuses
// sends to it) and still owes every bond it took.
func bondInvariants(ctx sdk.Context, k keeper.Keeper, bk BankKeeper) error {
	owed := sdk.NewCoins()
	ps, err := participants(ctx, k)
	if err != nil {
		return err
	}
	leaving := 0
	for _, p := range ps {
		if !types.Unbonded(p.Bond) {
			owed = owed.Add(p.Bond)
		}
		if p.LeavingEpoch == 0 {
			continue
		}
		leaving++
		addr, err := sdk.AccAddressFromBech32(p.Address)
		if err != nil {
			return err
		}
		if has, err := k.LeavingParticipants.Has(ctx, collections.Join(p.LeavingEpoch+1, addr)); err != nil || !has {
			return fmt.Errorf("leaving participant %s (epoch %d) is not in the leaving index: %v", p.Address, p.LeavingEpoch, err)
		}
	}
	indexed := 0
	if err := k.LeavingParticipants.Walk(ctx, nil, func(collections.Pair[uint64, sdk.AccAddress]) (bool, error) {
		indexed++
		return false, nil
	}); err != nil {
		return err
	}
	if indexed != leaving {
		return fmt.Errorf("%d leaving-participant entries for %d leaving participants", indexed, leaving)
	}
	count, err := k.ParticipantCount.Get(ctx)
	if err != nil && !errors.Is(err, collections.ErrNotFound) {
		return err
	}
	if count != uint64(len(ps)) {
		return fmt.Errorf("participant count %d, but %d participants", count, len(ps))
	}
	tas, err := transferAgents(ctx, k)
	if err != nil {
		return err
	}
	for _, ta := range tas {
		owed = owed.Add(ta.Bond)
	}
	module := authtypes.NewModuleAddress(types.ModuleName)
	for _, c := range owed {
		if held := bk.GetBalance(ctx, module, c.Denom); !held.Amount.Equal(c.Amount) {
			return fmt.Errorf("module account holds %s, but the bonds sum to %s", held, c)
		}
	}
	if !owed.AmountOf(BondDenom).IsPositive() {
		if held := bk.GetBalance(ctx, module, BondDenom); !held.IsZero() {
			return fmt.Errorf("module account holds %s, but no bond is owed", held)
		}
	}
	return nil
}
