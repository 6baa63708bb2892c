package keeper

// TEMPORARY: replaced by the agents branch at merge.

import (
	"context"

	sdk "github.com/cosmos/cosmos-sdk/types"

	"github.com/inferenced/inferenced/x/inference/types"
)

func (k Keeper) agentStarting(context.Context, sdk.AccAddress) error { return nil }
func (k Keeper) agentFinished(context.Context, string) error         { return nil }
func (k Keeper) chargeMiss(context.Context, string) error            { return nil }
func (k Keeper) refundMiss(context.Context, string) error            { return nil }
func (k Keeper) countCorroborated(context.Context, string) error     { return nil }

func (msgServer) RegisterTransferAgent(context.Context, *types.MsgRegisterTransferAgent) (*types.MsgRegisterTransferAgentResponse, error) {
	return nil, types.ErrNotTransferAgent
}
func (msgServer) LeaveTransferAgent(context.Context, *types.MsgLeaveTransferAgent) (*types.MsgLeaveTransferAgentResponse, error) {
	return nil, types.ErrNotTransferAgent
}
func (queryServer) TransferAgent(context.Context, *types.QueryTransferAgentRequest) (*types.QueryTransferAgentResponse, error) {
	return nil, types.ErrNotTransferAgent
}
func (queryServer) TransferAgents(context.Context, *types.QueryTransferAgentsRequest) (*types.QueryTransferAgentsResponse, error) {
	return nil, types.ErrNotTransferAgent
}
