package testutil

import (
	"context"
	"fmt"

	errorsmod "cosmossdk.io/errors"

	sdk "github.com/cosmos/cosmos-sdk/types"
	sdkerrors "github.com/cosmos/cosmos-sdk/types/errors"
	authtypes "github.com/cosmos/cosmos-sdk/x/auth/types"

	"github.com/inferenced/inferenced/x/inference/escrow"
	"github.com/inferenced/inferenced/x/inference/types"
)

// Bank is an in-memory types.BankKeeper: balances by address, module
// accounts at their module addresses, as x/bank computes them. It never
// iterates its maps, so it is deterministic.
type Bank struct {
	balances map[string]sdk.Coins
	blocked  map[string]bool
}

var _ types.BankKeeper = (*Bank)(nil)

// NewBank is an empty bank in which the module accounts named are blocked
// from receiving funds, as the app blocks its module accounts.
func NewBank(blockedModules ...string) *Bank {
	b := &Bank{balances: map[string]sdk.Coins{}, blocked: map[string]bool{}}
	for _, m := range blockedModules {
		b.blocked[string(authtypes.NewModuleAddress(m))] = true
	}
	return b
}

// Fund adds coins to addr's balance, as a genesis balance does.
func (b *Bank) Fund(addr sdk.AccAddress, coins ...sdk.Coin) {
	b.balances[string(addr)] = b.balances[string(addr)].Add(coins...)
}

// Balances is addr's whole balance.
func (b *Bank) Balances(addr sdk.AccAddress) sdk.Coins { return b.balances[string(addr)] }

func (b *Bank) move(from, to sdk.AccAddress, amt sdk.Coins) error {
	if !amt.IsValid() {
		return errorsmod.Wrapf(sdkerrors.ErrInvalidCoins, "%s", amt)
	}
	have := b.balances[string(from)]
	left, negative := have.SafeSub(amt...)
	if negative {
		return errorsmod.Wrapf(sdkerrors.ErrInsufficientFunds, "%s is smaller than %s", have, amt)
	}
	b.balances[string(from)] = left
	b.balances[string(to)] = b.balances[string(to)].Add(amt...)
	return nil
}

func (b *Bank) SendCoinsFromAccountToModule(_ context.Context, sender sdk.AccAddress, module string, amt sdk.Coins) error {
	return b.move(sender, authtypes.NewModuleAddress(module), amt)
}

func (b *Bank) SendCoinsFromModuleToAccount(_ context.Context, module string, recipient sdk.AccAddress, amt sdk.Coins) error {
	if b.BlockedAddr(recipient) {
		return errorsmod.Wrapf(sdkerrors.ErrUnauthorized, "%s is not allowed to receive funds", recipient)
	}
	return b.move(authtypes.NewModuleAddress(module), recipient, amt)
}

func (b *Bank) GetBalance(_ context.Context, addr sdk.AccAddress, denom string) sdk.Coin {
	return sdk.Coin{Denom: denom, Amount: b.balances[string(addr)].AmountOf(denom)}
}

func (b *Bank) BlockedAddr(addr sdk.AccAddress) bool { return b.blocked[string(addr)] }

// Agents are the transfer agents of Network's genesis: 0xA1… and 0xA2…,
// far from the executors' addresses (0…0 | i+1).
func Agents() []sdk.AccAddress {
	return []sdk.AccAddress{agentAddr(0xA1), agentAddr(0xA2)}
}

func agentAddr(b byte) sdk.AccAddress {
	a := make([]byte, 20)
	for i := range a {
		a[i] = b
	}
	return a
}

// BondedAgents are genesis records of addrs, each bonded with params'
// minimum bond. Bank.HoldBonds funds the module account with their bonds.
func BondedAgents(params types.Params, addrs ...sdk.AccAddress) ([]types.TransferAgent, error) {
	out := make([]types.TransferAgent, 0, len(addrs))
	for _, a := range addrs {
		s, err := AddressCodec.BytesToString(a)
		if err != nil {
			return nil, fmt.Errorf("encode agent address: %w", err)
		}
		out = append(out, types.TransferAgent{Address: s, Bond: params.TransferAgentMinBond})
	}
	return out, nil
}

// HoldBonds adds the agents' bonds to the x/inference module account, as a
// genesis that registers them must, so that InitGenesis accepts them.
func (b *Bank) HoldBonds(agents []types.TransferAgent) {
	for _, ta := range agents {
		b.Fund(escrow.ModuleAddress(), ta.Bond)
	}
}

// HoldParticipantBonds adds the participants' bonds to the x/inference
// module account, as a genesis that registers them must.
func (b *Bank) HoldParticipantBonds(participants []types.Participant) {
	for _, p := range participants {
		if !p.Bond.Amount.IsNil() && p.Bond.IsPositive() {
			b.Fund(escrow.ModuleAddress(), p.Bond)
		}
	}
}
