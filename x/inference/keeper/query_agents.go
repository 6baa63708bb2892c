package keeper

import (
	"context"
	"errors"

	"cosmossdk.io/collections"

	"google.golang.org/grpc/codes"

	"github.com/inferenced/inferenced/x/inference/agents"
	"github.com/inferenced/inferenced/x/inference/types"
)

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
		return nil, queryErr(codes.InvalidArgument, "empty request")
	}
	addr, err := q.k.addressCodec.StringToBytes(req.Address)
	if err != nil {
		return nil, queryErrf(codes.InvalidArgument, "address %q: %v", req.Address, err)
	}
	ta, err := q.k.agents.Get(ctx, addr)
	if errors.Is(err, collections.ErrNotFound) {
		return nil, queryErrf(codes.NotFound, "%s is not a registered transfer agent", req.Address)
	}
	if err != nil {
		return nil, grpcError(err)
	}
	params, index, err := q.k.agentViewContext(ctx)
	if err != nil {
		return nil, grpcError(err)
	}
	return &types.QueryTransferAgentResponse{Agent: agents.View(ta, params, index)}, nil
}

func (q queryServer) TransferAgents(ctx context.Context, req *types.QueryTransferAgentsRequest) (*types.QueryTransferAgentsResponse, error) {
	if req == nil {
		req = &types.QueryTransferAgentsRequest{}
	}
	params, index, err := q.k.agentViewContext(ctx)
	if err != nil {
		return nil, grpcError(err)
	}
	views, page, err := q.k.agents.Page(ctx, req.Pagination, params, index)
	if err != nil {
		return nil, queryErr(codes.InvalidArgument, err.Error())
	}
	return &types.QueryTransferAgentsResponse{Agents: views, Pagination: page}, nil
}
