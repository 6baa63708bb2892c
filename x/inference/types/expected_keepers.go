package types

import (
	"context"

	sdk "github.com/cosmos/cosmos-sdk/types"
)

// BankKeeper is what x/inference needs of x/bank: transfer-agent bonds move
// only through it, into and out of the module account.
type BankKeeper interface {
	SendCoinsFromAccountToModule(ctx context.Context, senderAddr sdk.AccAddress, recipientModule string, amt sdk.Coins) error
	SendCoinsFromModuleToAccount(ctx context.Context, senderModule string, recipientAddr sdk.AccAddress, amt sdk.Coins) error
	GetBalance(ctx context.Context, addr sdk.AccAddress, denom string) sdk.Coin
	// BlockedAddr reports an address that may not receive funds: it could
	// never get its bond back, so it may not register.
	BlockedAddr(addr sdk.AccAddress) bool
}
