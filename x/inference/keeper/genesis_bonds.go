package keeper

import (
	"context"
	"fmt"

	sdk "github.com/cosmos/cosmos-sdk/types"

	"github.com/inferenced/inferenced/x/inference/escrow"
	"github.com/inferenced/inferenced/x/inference/types"
)

// checkBondsHeld fails unless the module account holds at least the sum of
// the agents' and participants' bonds (x/bank's genesis is loaded first),
// as x/gov checks its deposits: a bond the module does not hold could never
// be returned.
//
// A bond holder at an address that may not receive funds (a module
// account) is refused too: its bond could never be returned, and the epoch
// boundary that tried would fail the block.
func (k Keeper) checkBondsHeld(ctx context.Context, gs types.GenesisState) error {
	total := sdk.NewCoins()
	add := func(what, address string, bond sdk.Coin) error {
		addr, err := k.addressCodec.StringToBytes(address)
		if err != nil {
			return fmt.Errorf("%s address %q: %w", what, address, err)
		}
		if !k.escrow.MayHold(addr) {
			return fmt.Errorf("%s %s may not receive funds (a module account?): its bond could never be returned", what, address)
		}
		if !types.Unbonded(bond) {
			total = total.Add(bond)
		}
		return nil
	}
	for _, ta := range gs.TransferAgents {
		if err := add("transfer agent", ta.Address, ta.Bond); err != nil {
			return err
		}
	}
	for _, p := range gs.Participants {
		if err := add("participant", p.Address, p.Bond); err != nil {
			return err
		}
	}
	for _, need := range total {
		held := k.escrow.Held(ctx, need.Denom)
		if held.Amount.LT(need.Amount) {
			return fmt.Errorf("the %s module account %s holds %s but the transfer agents' and participants' bonds sum to %s: "+
				"add the bonds to its balance in the bank genesis", types.ModuleName, escrow.ModuleAddress(), held, need)
		}
	}
	return nil
}
