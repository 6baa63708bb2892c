package keeper

import (
	"context"

	"google.golang.org/grpc/codes"

	"github.com/inferenced/inferenced/x/inference/types"
)

func (q queryServer) ExecutorHealth(ctx context.Context, req *types.QueryExecutorHealthRequest) (*types.QueryExecutorHealthResponse, error) {
	if req == nil {
		return nil, queryErr(codes.InvalidArgument, "empty request")
	}
	addr, err := q.k.addressCodec.StringToBytes(req.Address)
	if err != nil {
		return nil, queryErrf(codes.InvalidArgument, "address %q: %v", req.Address, err)
	}
	params, err := q.k.Params.Get(ctx)
	if err != nil {
		return nil, grpcError(err)
	}
	st, err := q.k.breaker.Status(ctx, addr, params.BreakerParams())
	if err != nil {
		return nil, grpcError(err)
	}
	return &types.QueryExecutorHealthResponse{Health: st}, nil
}

func (q queryServer) ExcludedExecutors(ctx context.Context, req *types.QueryExcludedExecutorsRequest) (*types.QueryExcludedExecutorsResponse, error) {
	if req == nil {
		req = &types.QueryExcludedExecutorsRequest{}
	}
	params, err := q.k.Params.Get(ctx)
	if err != nil {
		return nil, grpcError(err)
	}
	out, page, err := q.k.breaker.NotHealthy(ctx, req.Pagination, params.BreakerParams())
	if err != nil {
		return nil, queryErr(codes.InvalidArgument, err.Error())
	}
	return &types.QueryExcludedExecutorsResponse{Executors: out, Pagination: page}, nil
}
