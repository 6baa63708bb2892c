package keeper

import (
	"context"

	sdk "github.com/cosmos/cosmos-sdk/types"
	"github.com/cosmos/cosmos-sdk/types/query"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/inferenced/inferenced/x/inference/breaker"
	"github.com/inferenced/inferenced/x/inference/types"
)

// healthStatus is a breaker record as the queries show it, with window
// counts over the configured window.
func healthStatus(h types.ExecutorHealth, window uint32) types.HealthStatus {
	r := toBreaker(h)
	ts, tm := r.Windows[breaker.Traffic].Last(window)
	as, am := r.Windows[breaker.Attested].Last(window)
	st := types.HealthStatus{
		Address: h.Address, State: h.State, Reason: h.Reason, Evidence: h.Evidence,
		TrafficSamples: ts, TrafficMisses: tm, AttestedSamples: as, AttestedMisses: am,
		CooldownBlocks: h.CooldownBlocks, SinceHeight: h.SinceHeight, ExcludedAt: h.ExcludedAt,
		Exclusions: h.Exclusions, CapRefusals: h.CapRefusals, ProbeInferenceId: h.ProbeInferenceId,
	}
	if r.State == breaker.Excluded {
		st.EligibleHeight = r.EligibleAt()
	}
	return st
}

func (q queryServer) ExecutorHealth(ctx context.Context, req *types.QueryExecutorHealthRequest) (*types.QueryExecutorHealthResponse, error) {
	if req == nil {
		return nil, status.Error(codes.InvalidArgument, "empty request")
	}
	addr, err := q.k.addressCodec.StringToBytes(req.Address)
	if err != nil {
		return nil, status.Errorf(codes.InvalidArgument, "address %q: %v", req.Address, err)
	}
	params, err := q.k.Params.Get(ctx)
	if err != nil {
		return nil, grpcError(err)
	}
	e, err := q.k.loadHealth(ctx, addr)
	if err != nil {
		return nil, grpcError(err)
	}
	h, err := e.proto(q.k.addressCodec)
	if err != nil {
		return nil, grpcError(err)
	}
	return &types.QueryExecutorHealthResponse{Health: healthStatus(h, uint32(params.HealthCbWindowSamples))}, nil
}

func (q queryServer) ExcludedExecutors(ctx context.Context, req *types.QueryExcludedExecutorsRequest) (*types.QueryExcludedExecutorsResponse, error) {
	if req == nil {
		req = &types.QueryExcludedExecutorsRequest{}
	}
	params, err := q.k.Params.Get(ctx)
	if err != nil {
		return nil, grpcError(err)
	}
	window := uint32(params.HealthCbWindowSamples)
	out, page, err := query.CollectionFilteredPaginate(ctx, q.k.ExecutorHealth, req.Pagination,
		func(_ sdk.AccAddress, h types.ExecutorHealth) (bool, error) {
			return h.State != types.HEALTH_STATE_HEALTHY, nil
		},
		func(_ sdk.AccAddress, h types.ExecutorHealth) (types.HealthStatus, error) {
			return healthStatus(h, window), nil
		})
	if err != nil {
		return nil, status.Error(codes.InvalidArgument, err.Error())
	}
	return &types.QueryExcludedExecutorsResponse{Executors: out, Pagination: page}, nil
}
