package simulation

import (
	"errors"
	"fmt"
	"math/rand"

	"cosmossdk.io/collections"

	"github.com/cosmos/cosmos-sdk/baseapp"
	sdk "github.com/cosmos/cosmos-sdk/types"
	simtypes "github.com/cosmos/cosmos-sdk/types/simulation"
	authtypes "github.com/cosmos/cosmos-sdk/x/auth/types"
	govtypes "github.com/cosmos/cosmos-sdk/x/gov/types"
	simx "github.com/cosmos/cosmos-sdk/x/simulation"

	"github.com/inferenced/inferenced/x/inference/keeper"
	"github.com/inferenced/inferenced/x/inference/types"
)

// OpWeightProposalUpdateParams is the sim params key of the governance
// proposal that changes the params. x/gov's operations submit a proposal
// message at a twenty-fifth of its weight: 100 is 4, as the SDK modules'.
const (
	OpWeightProposalUpdateParams      = "op_weight_proposal_msg_update_params"
	DefaultWeightProposalUpdateParams = 100
)

// ProposalMsgs are the governance proposals x/gov's simulation submits:
// MsgUpdateParams by the gov authority with fresh random params (valid:
// RandomParams). x/gov runs it when the proposal passes.
func ProposalMsgs() []simtypes.WeightedProposalMsg {
	return []simtypes.WeightedProposalMsg{
		simx.NewWeightedProposalMsg(OpWeightProposalUpdateParams, DefaultWeightProposalUpdateParams, proposalUpdateParams),
	}
}

func proposalUpdateParams(r *rand.Rand, _ sdk.Context, _ []simtypes.Account) sdk.Msg {
	return &types.MsgUpdateParams{Authority: authtypes.NewModuleAddress(govtypes.ModuleName).String(), Params: RandomParams(r)}
}

// updateParams changes the params as x/gov runs a passed proposal's
// message (its EndBlocker: the handler on a branch of the block's state,
// written if it succeeds), with RandomParams from the gov authority, so
// that changes land mid-epoch in short runs, where the proposals above
// rarely pass. Invalid variants: a transaction signed by an account that
// is not the authority (ErrInvalidSigner), params that break a rule of
// Validate from the authority, and a max_participants or
// max_transfer_agents below its registry's size (ErrInvalidParams; the
// branch is thrown away, as x/gov marks such a proposal failed).
func (e env) updateParams(r *rand.Rand, app *baseapp.BaseApp, ctx sdk.Context, accs []simtypes.Account, chainID string,
) (simtypes.OperationMsg, []simtypes.FutureOperation, error) {
	msg := &types.MsgUpdateParams{Authority: e.k.Authority(), Params: RandomParams(r)}
	params, err := e.k.Params.Get(ctx)
	if err != nil {
		return skip(msg, "no params"), nil, err
	}
	handler := app.MsgServiceRouter().Handler(msg)
	if handler == nil {
		return skip(msg, "no handler"), nil, fmt.Errorf("no route for %s", sdk.MsgTypeURL(msg))
	}
	switch n := r.Intn(3); n {
	case 0:
		acc, _ := simtypes.RandomAcc(r, accs)
		msg.Authority = acc.Address.String()
		return e.deliver(r, app, ctx, chainID, acc, msg, invalid(types.ErrInvalidSigner, "signer is not the authority"))
	case 1:
		bad, why := InvalidParams(r, params)
		msg.Params = bad
		branch, _ := ctx.CacheContext()
		_, err = handler(branch, msg)
		return judge(msg, err, invalid(types.ErrInvalidParams, why))
	}
	participants, err := e.k.ParticipantCount.Get(ctx)
	if err != nil && !errors.Is(err, collections.ErrNotFound) {
		return skip(msg, "participant count"), nil, err
	}
	agents, err := e.k.Agents().Count(ctx)
	if err != nil {
		return skip(msg, "agent count"), nil, err
	}
	if msg.Params.MaxParticipants < participants || msg.Params.MaxTransferAgents < agents {
		if chance(r, 50) {
			branch, _ := ctx.CacheContext()
			_, err = handler(branch, msg)
			return judge(msg, err, invalid(types.ErrInvalidParams, "a max below its registry's size"))
		}
		msg.Params.MaxParticipants = max(msg.Params.MaxParticipants, participants)
		msg.Params.MaxTransferAgents = max(msg.Params.MaxTransferAgents, agents)
	}
	branch, write := ctx.CacheContext()
	if _, err := handler(branch, msg); err != nil {
		return judge(msg, err, valid())
	}
	write()
	return simtypes.NewOperationMsg(msg, true, "executed as x/gov runs a passed proposal"), nil, nil
}

// The invariants' operation name in the sim's event stats.
const invariantsRoute = "invariants"

// checkInvariants runs the module's invariants (Invariants) on the block's
// state between two transactions: a break fails the simulation.
func (e env) checkInvariants(_ *rand.Rand, _ *baseapp.BaseApp, ctx sdk.Context, _ []simtypes.Account, _ string,
) (simtypes.OperationMsg, []simtypes.FutureOperation, error) {
	if err := Invariants(ctx, e.k, e.bk); err != nil {
		return simtypes.NoOpMsg(types.ModuleName, invariantsRoute, "broken"), nil, fmt.Errorf("x/inference invariant broken at height %d: %w", ctx.BlockHeight(), err)
	}
	return simtypes.NewOperationMsgBasic(types.ModuleName, invariantsRoute, "", true, nil), nil, nil
}

// Invariants checks x/inference's stores (each store's own Invariants:
// the agents', the inferences' and the breaker's indexes against their
// records), the participant count and leaving index, and that the module
// account holds exactly the bonds of the agents and participants.
func Invariants(ctx sdk.Context, k keeper.Keeper, bk BankKeeper) error {
	if err := k.Agents().Invariants(ctx); err != nil {
		return fmt.Errorf("transfer agents: %w", err)
	}
	if err := k.Inferences().Invariants(ctx); err != nil {
		return fmt.Errorf("inferences: %w", err)
	}
	if err := k.Breaker().Invariants(ctx); err != nil {
		return fmt.Errorf("circuit breaker: %w", err)
	}
	return bondInvariants(ctx, k, bk)
}
