package simulation

import (
	"math/rand"

	"cosmossdk.io/math"

	"github.com/cosmos/cosmos-sdk/baseapp"
	sdk "github.com/cosmos/cosmos-sdk/types"
	simtypes "github.com/cosmos/cosmos-sdk/types/simulation"

	"github.com/inferenced/inferenced/x/inference/types"
)

// isAgent reports a registered transfer agent.
func (e env) isAgent(ctx sdk.Context) func(sdk.AccAddress) bool {
	return func(a sdk.AccAddress) bool {
		_, err := e.k.Agents().Get(ctx, a)
		return err == nil
	}
}

// registerTransferAgent registers an agent with a bond; invalid variants:
// a bond below transfer_agent_min_bond, a bond in another denom,
// registering twice. A full registry is refused as documented.
func (e env) registerTransferAgent(r *rand.Rand, app *baseapp.BaseApp, ctx sdk.Context, accs []simtypes.Account, chainID string,
) (simtypes.OperationMsg, []simtypes.FutureOperation, error) {
	msg := &types.MsgRegisterTransferAgent{}
	params, err := e.k.Params.Get(ctx)
	if err != nil {
		return skip(msg, "no params"), nil, err
	}
	tas, err := transferAgents(ctx, e.k)
	if err != nil {
		return skip(msg, "walk agents"), nil, err
	}
	if len(tas) > 0 && chance(r, 10) {
		ta := tas[r.Intn(len(tas))]
		acc, ok := simAccount(accs, ta.Address)
		if !ok {
			return skip(msg, "agent is not a sim account"), nil, nil
		}
		msg.Creator, msg.Bond = ta.Address, params.TransferAgentMinBond
		return e.deliver(r, app, ctx, chainID, acc, msg, invalid(types.ErrAgentExists, "registering twice"))
	}
	acc, ok := stranger(r, accs, e.isAgent(ctx))
	if !ok {
		return skip(msg, "no unregistered account"), nil, nil
	}
	msg.Creator = acc.Address.String()
	bond, ok := e.affordable(ctx, r, acc.Address, params.TransferAgentMinBond.Amount)
	if !ok {
		return skip(msg, "account cannot afford the minimum bond"), nil, nil
	}
	msg.Bond = bond
	o := valid()
	switch n := r.Intn(100); {
	case n < 8 && params.TransferAgentMinBond.Amount.GT(math.OneInt()):
		msg.Bond = sdk.NewCoin(BondDenom, params.TransferAgentMinBond.Amount.SubRaw(1))
		o = invalid(types.ErrInvalidBond, "bond below transfer_agent_min_bond")
	case n < 12:
		msg.Bond = sdk.NewCoin("notthebonddenom", bond.Amount)
		o = invalid(types.ErrInvalidBond, "bond in another denom")
	default:
		count, err := e.k.Agents().Count(ctx)
		if err == nil && count >= params.MaxTransferAgents {
			o = invalid(types.ErrTooManyAgents, "registry full")
		}
	}
	return e.deliver(r, app, ctx, chainID, acc, msg, o)
}

// leaveTransferAgent makes an agent leave; invalid variants: an account
// that is no agent, leaving twice.
func (e env) leaveTransferAgent(r *rand.Rand, app *baseapp.BaseApp, ctx sdk.Context, accs []simtypes.Account, chainID string,
) (simtypes.OperationMsg, []simtypes.FutureOperation, error) {
	return e.leave(r, app, ctx, accs, chainID, func(c string) sdk.Msg { return &types.MsgLeaveTransferAgent{Creator: c} },
		func(ctx sdk.Context) ([]holder, error) {
			tas, err := transferAgents(ctx, e.k)
			hs := make([]holder, len(tas))
			for i, ta := range tas {
				hs[i] = holder{address: ta.Address, leaving: ta.LeavingEpoch}
			}
			return hs, err
		}, e.isAgent(ctx), types.ErrNotTransferAgent, types.ErrAgentLeaving)
}
