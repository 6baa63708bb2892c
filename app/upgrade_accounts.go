package app

import (
	"context"
	"fmt"

	sdk "github.com/cosmos/cosmos-sdk/types"
	authtypes "github.com/cosmos/cosmos-sdk/x/auth/types"
)

// ensureModuleAccount makes module name's address its module account
// before anything pays into it. A release that adds a module account did
// not block its address before: anyone could send it 1stake, which creates
// a plain account there, and x/bank then refuses every payment to the
// module ("account is not a module account") for good. A plain account
// found there is replaced by the module account under the same account
// number (its balance stays where it is, at the address); a missing one is
// created. v2 does it for x/inference (bonds), v4 for x/staking's
// key-rotation fee pool (fees burned through it).
func (app *App) ensureModuleAccount(ctx context.Context, name string) error {
	perms, ok := maccPerms[name]
	if !ok {
		return fmt.Errorf("%s is not a module account of this app", name)
	}
	addr := authtypes.NewModuleAddress(name)
	acc := app.AccountKeeper.GetAccount(ctx, addr)
	if acc == nil {
		app.AccountKeeper.GetModuleAccount(ctx, name) // creates it
		return nil
	}
	if _, ok := acc.(sdk.ModuleAccountI); ok {
		return nil
	}
	if acc.GetPubKey() != nil {
		// A module address has no key: a signed account there would be a
		// hash collision, not a transfer.
		return fmt.Errorf("account %s at the %s module address has a public key", addr, name)
	}
	base := authtypes.NewBaseAccount(addr, nil, acc.GetAccountNumber(), acc.GetSequence())
	app.AccountKeeper.SetAccount(ctx, authtypes.NewModuleAccount(base, name, perms...))
	sdk.UnwrapSDKContext(ctx).Logger().Info("software upgrade: plain account at a module address made its module account",
		"module", name, "address", addr.String(), "account_number", acc.GetAccountNumber())
	return nil
}
