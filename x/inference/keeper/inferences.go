package keeper

import (
	"context"
	"errors"
	"fmt"

	"cosmossdk.io/collections"
	errorsmod "cosmossdk.io/errors"

	sdk "github.com/cosmos/cosmos-sdk/types"

	"github.com/inferenced/inferenced/x/inference/inferences"
	"github.com/inferenced/inferenced/x/inference/sprt"
	"github.com/inferenced/inferenced/x/inference/types"
)

// StartRequest is a transfer agent's request to route an inference.
type StartRequest struct {
	TransferAgent sdk.AccAddress
	Executor      sdk.AccAddress
	InferenceID   string
	Model         string
	PromptHash    string
}

// StartInference records a new inference on a routable executor and queues
// its expiry. It returns the expiration height.
func (k Keeper) StartInference(ctx context.Context, req StartRequest) (int64, error) {
	if err := types.ValidateInferenceID(req.InferenceID); err != nil {
		return 0, errorsmod.Wrap(types.ErrInvalidInference, err.Error())
	}
	if err := types.ValidateModel(req.Model); err != nil {
		return 0, errorsmod.Wrap(types.ErrInvalidInference, err.Error())
	}
	if err := types.ValidateHash("prompt_hash", req.PromptHash); err != nil {
		return 0, errorsmod.Wrap(types.ErrInvalidInference, err.Error())
	}
	// The id is the agent's own: another agent's inference of the same id
	// is another key. Once pruned, the agent may reuse an id; the new
	// inference is a fresh one.
	key := inferences.NewKey(req.TransferAgent, req.InferenceID)
	exists, err := k.inferences.Has(ctx, key)
	if err != nil {
		return 0, err
	}
	if exists {
		return 0, errorsmod.Wrapf(types.ErrInferenceExists, "%q of transfer agent %s", req.InferenceID, k.spell(req.TransferAgent))
	}
	if err := k.agents.Starting(ctx, req.TransferAgent); err != nil {
		return 0, err
	}
	if err := k.CheckRoutable(ctx, req.Executor, req.Model); err != nil {
		return 0, err
	}
	params, err := k.Params.Get(ctx)
	if err != nil {
		return 0, fmt.Errorf("load params: %w", err)
	}
	if err := k.checkScope(ctx, params, req.Executor, req.TransferAgent); err != nil {
		return 0, err
	}
	epoch, err := k.currentEpoch(ctx)
	if err != nil {
		return 0, err
	}
	agent, err := k.addressCodec.BytesToString(req.TransferAgent)
	if err != nil {
		return 0, fmt.Errorf("encode transfer agent: %w", err)
	}
	executor, err := k.addressCodec.BytesToString(req.Executor)
	if err != nil {
		return 0, fmt.Errorf("encode executor: %w", err)
	}
	height := sdk.UnwrapSDKContext(ctx).BlockHeight()
	inf := types.Inference{
		InferenceId:      req.InferenceID,
		Model:            req.Model,
		TransferAgent:    agent,
		Executor:         executor,
		PromptHash:       req.PromptHash,
		Status:           types.INFERENCE_STATUS_STARTED,
		EpochIndex:       epoch.Index,
		StartHeight:      height,
		ExpirationHeight: height + int64(params.ExpirationBlocks),
	}
	if err := k.inferences.Start(ctx, key, inf); err != nil {
		return 0, err
	}
	err = sdk.UnwrapSDKContext(ctx).EventManager().EmitTypedEvent(&types.EventInferenceStarted{
		InferenceId: inf.InferenceId, Model: inf.Model, TransferAgent: agent, Executor: executor,
		ExpirationHeight: inf.ExpirationHeight,
	})
	if err != nil {
		return 0, fmt.Errorf("emit start event: %w", err)
	}
	if err := k.claimProbe(ctx, req.Executor, agent, inf.InferenceId); err != nil {
		return 0, err
	}
	return inf.ExpirationHeight, nil
}

// checkScope refuses a start by an agent that a scoped traffic trip keeps
// off the executor (breakerstore.Store.CheckScope), except in shadow mode.
func (k Keeper) checkScope(ctx context.Context, params types.Params, executor, agent sdk.AccAddress) error {
	if !params.HealthCbEnforce {
		return nil
	}
	address, err := k.addressCodec.BytesToString(agent)
	if err != nil {
		return fmt.Errorf("encode transfer agent: %w", err)
	}
	return k.breaker.CheckScope(ctx, executor, address)
}

// claimProbe makes a start on a PROBE executor with a free slot its probe.
// An agent whose earlier probe of this PROBE period expired uncorroborated
// is refused (types.ErrProbeTaken), except in shadow mode
// (health_cb_enforce false), where its start is simply no probe.
func (k Keeper) claimProbe(ctx context.Context, executor sdk.AccAddress, agent, id string) error {
	refused := k.breaker.ClaimProbe(ctx, executor, agent, id)
	if !errors.Is(refused, types.ErrProbeTaken) {
		return refused
	}
	params, err := k.Params.Get(ctx)
	if err != nil {
		return fmt.Errorf("load params: %w", err)
	}
	if !params.HealthCbEnforce {
		return nil
	}
	return refused
}

// FinishInference closes agent's STARTED inference id for its executor
// (signer) and counts it.
func (k Keeper) FinishInference(ctx context.Context, signer, agent sdk.AccAddress, id, responseHash string) error {
	if err := types.ValidateInferenceID(id); err != nil {
		return errorsmod.Wrap(types.ErrInvalidInference, err.Error())
	}
	if err := types.ValidateHash("response_hash", responseHash); err != nil {
		return errorsmod.Wrap(types.ErrInvalidInference, err.Error())
	}
	key := inferences.NewKey(agent, id)
	inf, err := k.inferences.Get(ctx, agent, id)
	if err != nil {
		return err
	}
	executor, err := k.addressCodec.StringToBytes(inf.Executor)
	if err != nil {
		return fmt.Errorf("inference executor %q: %w", inf.Executor, err)
	}
	if !sdk.AccAddress(executor).Equals(signer) {
		return errorsmod.Wrapf(types.ErrNotExecutor, "inference %q is assigned to %s", id, inf.Executor)
	}
	if inf.Status != types.INFERENCE_STATUS_STARTED {
		return errorsmod.Wrapf(types.ErrInferenceNotStarted, "inference %q is %s", id, inf.Status)
	}
	inf.Status = types.INFERENCE_STATUS_FINISHED
	inf.ResponseHash = responseHash
	inf.EndHeight = sdk.UnwrapSDKContext(ctx).BlockHeight()
	params, err := k.Params.Get(ctx)
	if err != nil {
		return fmt.Errorf("load params: %w", err)
	}
	if err := k.inferences.Close(ctx, key, inf, params); err != nil {
		return err
	}
	if err := k.countOutcome(ctx, executor, true); err != nil {
		return err
	}
	if err := k.agents.Finished(ctx, inf.TransferAgent); err != nil {
		return err
	}
	if err := k.breaker.QueueOutcome(ctx, inf, false); err != nil {
		return err
	}
	if err := sdk.UnwrapSDKContext(ctx).EventManager().EmitTypedEvent(&types.EventInferenceFinished{
		InferenceId: id, Executor: inf.Executor, TransferAgent: inf.TransferAgent,
	}); err != nil {
		return fmt.Errorf("emit finish event: %w", err)
	}
	return nil
}

// EndBlock expires exactly the inferences due at or before this height,
// then prunes exactly the closed ones due (x/inference/inferences). An
// inference expired here is due for pruning retention blocks later, never
// in this block. The miss of each expiry counts against its executor
// (breaker and SPRT) only once the breaker's evidence ledger finds it
// corroborated (next block).
func (k Keeper) EndBlock(ctx context.Context) error {
	height := sdk.UnwrapSDKContext(ctx).BlockHeight()
	if err := k.inferences.Expire(ctx, height, func(inf types.Inference) error {
		if err := k.breaker.QueueOutcome(ctx, inf, true); err != nil {
			return err
		}
		if err := sdk.UnwrapSDKContext(ctx).EventManager().EmitTypedEvent(&types.EventInferenceExpired{
			InferenceId: inf.InferenceId, Executor: inf.Executor, TransferAgent: inf.TransferAgent,
		}); err != nil {
			return fmt.Errorf("emit expiry event: %w", err)
		}
		return nil
	}); err != nil {
		return err
	}
	return k.inferences.Prune(ctx, height)
}

// Inference returns agent's inference id; a missing one is
// ErrInferenceNotFound with the reason it is missing.
func (k Keeper) Inference(ctx context.Context, agent sdk.AccAddress, id string) (types.Inference, error) {
	return k.inferences.Get(ctx, agent, id)
}

// countOutcome adds a finish or a counted miss to the executor's epoch
// stats and, on a miss, runs the SPRT downtime check. A miss counts only
// when the breaker's evidence ledger finds it corroborated
// (ApplyHealth applies the breaker's verdicts): one agent's word does not
// make an executor INACTIVE. An outcome counts in the epoch where
// it happens, even for an inference started in the previous one: otherwise
// an executor could ignore every request of an epoch's last blocks for free.
//
// An executor that has left (DeregisterParticipant, released at the
// boundary) has no record: its in-flight inferences still close and credit
// or charge their agents, but there are no stats to count and no status to
// change, as it is in no group.
func (k Keeper) countOutcome(ctx context.Context, executor sdk.AccAddress, ok bool) error {
	p, err := k.Participants.Get(ctx, executor)
	if errors.Is(err, collections.ErrNotFound) {
		sdk.UnwrapSDKContext(ctx).Logger().Debug("outcome of a departed executor", "module", types.ModuleName, "executor", executor, "ok", ok)
		return nil
	}
	if err != nil {
		return fmt.Errorf("load executor %s: %w", executor, err)
	}
	if ok {
		p.CurrentEpochStats.InferenceCount++
		return k.SetParticipant(ctx, p)
	}
	p.CurrentEpochStats.MissedRequests++
	if p.Status == types.PARTICIPANT_STATUS_ACTIVE {
		down, err := k.isDown(ctx, p.CurrentEpochStats)
		if err != nil {
			return err
		}
		if down {
			p.Status = types.PARTICIPANT_STATUS_INACTIVE
			if err := k.emitInactive(ctx, p); err != nil {
				return err
			}
		}
	}
	return k.SetParticipant(ctx, p)
}

func (k Keeper) isDown(ctx context.Context, stats types.CurrentEpochStats) (bool, error) {
	params, err := k.Params.Get(ctx)
	if err != nil {
		return false, fmt.Errorf("load params: %w", err)
	}
	test, err := sprt.New(params.DowntimeGoodPercentage, params.DowntimeBadPercentage, params.DowntimeHThreshold)
	if err != nil {
		return false, fmt.Errorf("downtime params: %w", err)
	}
	return test.IsDown(stats.MissedRequests, stats.InferenceCount), nil
}

func (k Keeper) emitInactive(ctx context.Context, p types.Participant) error {
	epoch, err := k.currentEpoch(ctx)
	if err != nil {
		return err
	}
	sdkCtx := sdk.UnwrapSDKContext(ctx)
	sdkCtx.Logger().Debug("participant inactive by SPRT", "module", types.ModuleName, "address", p.Address,
		"missed", p.CurrentEpochStats.MissedRequests, "finished", p.CurrentEpochStats.InferenceCount)
	return sdkCtx.EventManager().EmitTypedEvent(&types.EventParticipantInactive{
		Address:        p.Address,
		InferenceCount: p.CurrentEpochStats.InferenceCount,
		MissedRequests: p.CurrentEpochStats.MissedRequests,
		EpochIndex:     epoch.Index,
	})
}
