package routes_test

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"cosmossdk.io/collections"
	errorsmod "cosmossdk.io/errors"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/inferenced/inferenced/x/inference/keeper"
	"github.com/inferenced/inferenced/x/inference/lottery"
	"github.com/inferenced/inferenced/x/inference/selection"
	"github.com/inferenced/inferenced/x/inference/types"
)

// The reference: GetRandomExecutor as it was before route tables (main at
// efd442a), rebuilt from the keeper's exported API. Every query walks the
// group, reads each member's participant record, runs the health stage and
// draws. The differential tests check the query path against it and the
// benchmarks measure both in one run. It is a copy on purpose: it must not
// change when the keeper's rule does.

// referenceStage is the health stage as the reference ran it.
type referenceStage func(ctx context.Context, height int64, pool []types.Candidate) ([]types.Candidate, error)

// breakerStage is the circuit breaker's stage as it was: it read the params
// and, in shadow mode, let everyone through.
func breakerStage(k keeper.Keeper) referenceStage {
	return func(ctx context.Context, height int64, pool []types.Candidate) ([]types.Candidate, error) {
		params, err := k.Params.Get(ctx)
		if err != nil {
			return nil, fmt.Errorf("load params: %w", err)
		}
		if !params.HealthCbEnforce {
			return pool, nil
		}
		return k.Breaker().Filter(ctx, height, pool)
	}
}

// referenceQuery answers a GetRandomExecutor query on the committed state
// ctx reads, at ctx's height, as the query server did.
func referenceQuery(ctx context.Context, k keeper.Keeper, stage referenceStage, committed int64, model string,
	seed uint64,
) (*types.QueryGetRandomExecutorResponse, error) {
	if err := types.ValidateModel(model); err != nil {
		return nil, status.Error(codes.InvalidArgument, err.Error())
	}
	d, err := referenceRandomExecutor(ctx, k, stage, model, seed, committed+1)
	if err != nil {
		return nil, referenceGRPCError(err)
	}
	return &types.QueryGetRandomExecutorResponse{
		Executor: d.Picked.Member, Candidates: uint32(d.Candidates), TotalWeight: d.TotalWeight,
		HealthFallback: d.Fallback, Probe: d.Picked.Probe,
	}, nil
}

func referenceGRPCError(err error) error {
	switch {
	case errors.Is(err, collections.ErrNotFound), errors.Is(err, types.ErrNoEpoch):
		return status.Error(codes.NotFound, err.Error())
	case errors.Is(err, types.ErrNoExecutor):
		return status.Error(codes.FailedPrecondition, err.Error())
	default:
		return status.Error(codes.Internal, err.Error())
	}
}

func referenceRandomExecutor(ctx context.Context, k keeper.Keeper, stage referenceStage, model string, seed uint64,
	height int64,
) (selection.Draw, error) {
	sel, err := referenceCandidates(ctx, k, stage, model, height)
	if err != nil {
		return selection.Draw{}, err
	}
	weights := make([]uint64, len(sel.Pool))
	for i, c := range sel.Pool {
		weights[i] = c.Weight
	}
	total, err := lottery.Total(weights)
	if err != nil {
		return selection.Draw{}, errorsmod.Wrap(types.ErrNoExecutor, err.Error())
	}
	i, err := lottery.Draw(weights, seed)
	if err != nil {
		return selection.Draw{}, errorsmod.Wrap(types.ErrNoExecutor, err.Error())
	}
	return selection.Draw{Picked: sel.Pool[i], Candidates: len(sel.Pool), TotalWeight: total, Fallback: sel.Fallback}, nil
}

type referenceRefusal struct{ reason string }

func (r referenceRefusal) Error() string { return r.reason }

func referenceAdmit(ctx context.Context, k keeper.Keeper, inPoc bool, m types.EpochMember, model string) error {
	if _, served := slices.BinarySearch(m.Models, model); !served {
		return referenceRefusal{"model"}
	}
	addr, err := k.AddressCodec().StringToBytes(m.Address)
	if err != nil {
		return fmt.Errorf("epoch member address %q: %w", m.Address, err)
	}
	p, err := k.Participants.Get(ctx, addr)
	if err != nil {
		return fmt.Errorf("executor %s: %w", m.Address, err)
	}
	if p.Status != types.PARTICIPANT_STATUS_ACTIVE {
		return referenceRefusal{"status"}
	}
	if m.Weight == 0 {
		return referenceRefusal{"weight"}
	}
	if inPoc && !m.PocAvailable {
		return referenceRefusal{"poc"}
	}
	return nil
}

func referenceCandidates(ctx context.Context, k keeper.Keeper, stage referenceStage, model string, height int64) (selection.Selection, error) {
	if err := types.ValidateModel(model); err != nil {
		return selection.Selection{}, errorsmod.Wrap(types.ErrNoExecutor, err.Error())
	}
	params, err := k.Params.Get(ctx)
	if err != nil {
		return selection.Selection{}, fmt.Errorf("load params: %w", err)
	}
	epoch, err := k.Epoch.Get(ctx)
	if errors.Is(err, collections.ErrNotFound) {
		return selection.Selection{}, types.ErrNoEpoch
	}
	if err != nil {
		return selection.Selection{}, fmt.Errorf("load epoch: %w", err)
	}
	inPoc := height < epoch.StartHeight+int64(params.PocPhaseBlocks)
	var pool []types.Candidate
	err = k.EpochMembers.Walk(ctx, nil, func(_ uint32, m types.EpochMember) (bool, error) {
		err := referenceAdmit(ctx, k, inPoc, m, model)
		var refused referenceRefusal
		switch {
		case err == nil:
			pool = append(pool, types.Candidate{Member: m, Weight: m.Weight})
		case !errors.As(err, &refused):
			return true, err
		}
		return false, nil
	})
	if err != nil {
		return selection.Selection{}, fmt.Errorf("walk epoch group: %w", err)
	}
	if len(pool) == 0 {
		return selection.Selection{}, errorsmod.Wrapf(types.ErrNoExecutor, "no active executor with positive weight serves model %q now", model)
	}
	if stage == nil {
		return selection.Selection{Pool: pool}, nil
	}
	healthy, err := stage(ctx, height, slices.Clone(pool))
	if err != nil {
		return selection.Selection{}, fmt.Errorf("health stage: %w", err)
	}
	healthy = slices.DeleteFunc(healthy, func(c types.Candidate) bool { return c.Weight == 0 })
	if len(healthy) == 0 {
		return selection.Selection{Pool: pool, Fallback: true}, nil
	}
	return selection.Selection{Pool: healthy}, nil
}
