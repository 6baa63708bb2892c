package app

import (
	"context"
	"fmt"

	sdk "github.com/cosmos/cosmos-sdk/types"
	authtypes "github.com/cosmos/cosmos-sdk/x/auth/types"

	inferencetypes "github.com/inferenced/inferenced/x/inference/types"
)

// ensureInferenceModuleAccount makes the inference module's address a
// module account before anything pays a bond into it. The previous release
// had no such account, nor did it block the address from receiving funds:
// anyone could send it 1stake, which creates a plain account there, and
// x/bank then refuses every bond paid to the module ("account is not a
// module account") for good. A plain account found there is replaced by
// the module account under the same account number (its balance stays
// where it is, at the address); a missing one is created.
func (app *App) ensureInferenceModuleAccount(ctx context.Context) error {
	addr := authtypes.NewModuleAddress(inferencetypes.ModuleName)
	acc := app.AccountKeeper.GetAccount(ctx, addr)
	if acc == nil {
		app.AccountKeeper.GetModuleAccount(ctx, inferencetypes.ModuleName) // creates it
		return nil
	}
	if _, ok := acc.(sdk.ModuleAccountI); ok {
		return nil
	}
	if acc.GetPubKey() != nil {
		// A module address has no key: a signed account there would be a
		// hash collision, not a transfer.
		return fmt.Errorf("account %s at the inference module address has a public key", addr)
	}
	base := authtypes.NewBaseAccount(addr, nil, acc.GetAccountNumber(), acc.GetSequence())
	app.AccountKeeper.SetAccount(ctx, authtypes.NewModuleAccount(base, inferencetypes.ModuleName, maccPerms[inferencetypes.ModuleName]...))
	sdk.UnwrapSDKContext(ctx).Logger().Info("software upgrade: plain account at the inference module address made its module account",
		"address", addr.String(), "account_number", acc.GetAccountNumber())
	return nil
}
