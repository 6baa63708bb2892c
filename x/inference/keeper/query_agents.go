package keeper

import (
	"context"
	"errors"

	"cosmossdk.io/collections"

	sdk "github.com/cosmos/cosmos-sdk/types"
	"github.com/cosmos/cosmos-sdk/types/query"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/inferenced/inferenced/x/inference/types"
)

// agentView is ta as the queries show it: its standing as of epoch index
// (zero if stale) and what that standing allows.
func agentView(ta types.TransferAgent, params types.Params, index uint64) types.TransferAgentView {
	ta.Standing = standingIn(ta.Standing, index)
	return types.TransferAgentView{
		Agent:         ta,
		MissAllowance: params.MissAllowance(ta.Standing.Finished),
		MayStart:      mayStart(ta, ta.Standing),
	}
}

// agentViewContext is what every agent view of one query shares.
func (k Keeper) agentViewContext(ctx context.Context) (types.Params, uint64, error) {
	params, err := k.Params.Get(ctx)
	if err != nil {
		return types.Params{}, 0, err
	}
	index, err := k.epochIndexOrZero(ctx)
	return params, index, err
}

func (q queryServer) TransferAgent(ctx context.Context, req *types.QueryTransferAgentRequest) (*types.QueryTransferAgentResponse, error) {
	if req == nil {
		return nil, status.Error(codes.InvalidArgument, "empty request")
	}
	addr, err := q.k.addressCodec.StringToBytes(req.Address)
	if err != nil {
		return nil, status.Errorf(codes.InvalidArgument, "address %q: %v", req.Address, err)
	}
	ta, err := q.k.TransferAgents.Get(ctx, addr)
	if errors.Is(err, collections.ErrNotFound) {
		return nil, status.Errorf(codes.NotFound, "%s is not a registered transfer agent", req.Address)
	}
	if err != nil {
		return nil, grpcError(err)
	}
	params, index, err := q.k.agentViewContext(ctx)
	if err != nil {
		return nil, grpcError(err)
	}
	return &types.QueryTransferAgentResponse{Agent: agentView(ta, params, index)}, nil
}

func (q queryServer) TransferAgents(ctx context.Context, req *types.QueryTransferAgentsRequest) (*types.QueryTransferAgentsResponse, error) {
	if req == nil {
		req = &types.QueryTransferAgentsRequest{}
	}
	params, index, err := q.k.agentViewContext(ctx)
	if err != nil {
		return nil, grpcError(err)
	}
	agents, page, err := query.CollectionPaginate(ctx, q.k.TransferAgents, req.Pagination,
		func(_ sdk.AccAddress, ta types.TransferAgent) (types.TransferAgentView, error) {
			return agentView(ta, params, index), nil
		})
	if err != nil {
		return nil, status.Error(codes.InvalidArgument, err.Error())
	}
	return &types.QueryTransferAgentsResponse{Agents: agents, Pagination: page}, nil
}
