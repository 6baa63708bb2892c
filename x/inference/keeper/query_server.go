package keeper

import (
	"context"
	"errors"
	"slices"

	"cosmossdk.io/collections"

	sdk "github.com/cosmos/cosmos-sdk/types"
	"github.com/cosmos/cosmos-sdk/types/query"
	"google.golang.org/grpc/codes"

	"github.com/inferenced/inferenced/x/inference/selection"
	"github.com/inferenced/inferenced/x/inference/types"
)

type queryServer struct {
	k      Keeper
	router Router
}

var _ types.QueryServer = queryServer{}

// Router answers GetRandomExecutor for a query over the committed state of
// the block at committed, for a start in the block after it: the answer of
// RandomExecutor for that state and seed (x/inference/routes keeps route
// tables per committed height for it).
type Router interface {
	RandomExecutor(ctx context.Context, model string, seed uint64, committed int64) (selection.Draw, error)
}

// NewQueryServerImpl returns the Query service over the keeper, drawing
// executors through router.
func NewQueryServerImpl(k Keeper, router Router) types.QueryServer {
	return queryServer{k: k, router: router}
}

// grpcError maps store and domain errors to gRPC status codes.
func grpcError(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, collections.ErrNotFound), errors.Is(err, types.ErrNoEpoch), errors.Is(err, types.ErrInferenceNotFound):
		return queryErr(codes.NotFound, err.Error())
	case errors.Is(err, types.ErrNoExecutor):
		return queryErr(codes.FailedPrecondition, err.Error())
	default:
		return queryErr(codes.Internal, err.Error())
	}
}

func (q queryServer) Params(ctx context.Context, _ *types.QueryParamsRequest) (*types.QueryParamsResponse, error) {
	params, err := q.k.Params.Get(ctx)
	if err != nil {
		return nil, grpcError(err)
	}
	return &types.QueryParamsResponse{Params: params}, nil
}

func (q queryServer) Participant(ctx context.Context, req *types.QueryParticipantRequest) (*types.QueryParticipantResponse, error) {
	if req == nil {
		return nil, queryErr(codes.InvalidArgument, "empty request")
	}
	addr, err := q.k.addressCodec.StringToBytes(req.Address)
	if err != nil {
		return nil, queryErrf(codes.InvalidArgument, "address %q: %v", req.Address, err)
	}
	p, err := q.k.Participants.Get(ctx, addr)
	if err != nil {
		return nil, grpcError(err)
	}
	return &types.QueryParticipantResponse{Participant: p}, nil
}

func (q queryServer) Participants(ctx context.Context, req *types.QueryParticipantsRequest) (*types.QueryParticipantsResponse, error) {
	if req == nil {
		req = &types.QueryParticipantsRequest{}
	}
	participants, page, err := query.CollectionPaginate(ctx, q.k.Participants, req.Pagination,
		func(_ sdk.AccAddress, p types.Participant) (types.Participant, error) { return p, nil })
	if err != nil {
		return nil, queryErr(codes.InvalidArgument, err.Error())
	}
	return &types.QueryParticipantsResponse{Participants: participants, Pagination: page}, nil
}

func (q queryServer) CurrentEpoch(ctx context.Context, _ *types.QueryCurrentEpochRequest) (*types.QueryCurrentEpochResponse, error) {
	epoch, err := q.k.currentEpoch(ctx)
	if err != nil {
		return nil, grpcError(err)
	}
	params, err := q.k.Params.Get(ctx)
	if err != nil {
		return nil, grpcError(err)
	}
	height := sdk.UnwrapSDKContext(ctx).BlockHeight()
	return &types.QueryCurrentEpochResponse{
		Epoch:           epoch,
		InPocPhase:      params.InPocPhase(epoch, height),
		NextEpochHeight: params.NextEpochHeight(epoch),
	}, nil
}

func (q queryServer) EpochGroup(ctx context.Context, _ *types.QueryEpochGroupRequest) (*types.QueryEpochGroupResponse, error) {
	group, err := q.k.EpochGroup(ctx)
	if err != nil {
		return nil, grpcError(err)
	}
	return &types.QueryEpochGroupResponse{Group: group}, nil
}

func (q queryServer) Inference(ctx context.Context, req *types.QueryInferenceRequest) (*types.QueryInferenceResponse, error) {
	if req == nil {
		return nil, queryErr(codes.InvalidArgument, "empty request")
	}
	if err := types.ValidateInferenceID(req.InferenceId); err != nil {
		return nil, queryErr(codes.InvalidArgument, err.Error())
	}
	agent, err := q.k.transferAgentArg(req.TransferAgent)
	if err != nil {
		return nil, queryErr(codes.InvalidArgument, err.Error())
	}
	inf, err := q.k.Inference(ctx, agent, req.InferenceId)
	if err != nil {
		return nil, grpcError(err)
	}
	return &types.QueryInferenceResponse{Inference: inf}, nil
}

func (q queryServer) GetRandomExecutor(ctx context.Context, req *types.QueryGetRandomExecutorRequest) (*types.QueryGetRandomExecutorResponse, error) {
	if req == nil {
		return nil, queryErr(codes.InvalidArgument, "empty request")
	}
	if err := types.ValidateModel(req.Model); err != nil {
		return nil, queryErr(codes.InvalidArgument, err.Error())
	}
	// A query reads the last committed block; the start it informs executes
	// in the next one, so the stages are evaluated as of that block. The
	// query context reads exactly the committed state of its height, which
	// is what lets the route table be kept per height.
	d, err := q.router.RandomExecutor(ctx, req.Model, req.Seed, sdk.UnwrapSDKContext(ctx).BlockHeight())
	if err != nil {
		return nil, grpcError(err)
	}
	// The member may be a route table's, shared by every query at this
	// height: the response gets its own copy of the models.
	executor := d.Picked.Member
	executor.Models = slices.Clone(executor.Models)
	return &types.QueryGetRandomExecutorResponse{
		Executor: executor, Candidates: uint32(d.Candidates), TotalWeight: d.TotalWeight,
		HealthFallback: d.Fallback, Probe: d.Picked.Probe,
	}, nil
}
