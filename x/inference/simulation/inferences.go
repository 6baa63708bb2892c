package simulation

import (
	"errors"
	"fmt"
	"math/rand"

	"github.com/cosmos/cosmos-sdk/baseapp"
	sdk "github.com/cosmos/cosmos-sdk/types"
	simtypes "github.com/cosmos/cosmos-sdk/types/simulation"

	"github.com/inferenced/inferenced/x/inference/types"
)

func randomID(r *rand.Rand) string { return "sim-" + simtypes.RandStringOfLength(r, 12) }

// startInference starts an inference from an agent that may start on an
// executor the selection draws; invalid variants: a sender that is no
// agent, an executor outside the epoch group, an id the agent already
// used, a malformed id. Refusals the agent's state or the breaker
// decide (leaving, stopped, a scoped trip, a probe it may not take) are
// predicted from the same state and expected as documented.
func (e env) startInference(r *rand.Rand, app *baseapp.BaseApp, ctx sdk.Context, accs []simtypes.Account, chainID string,
) (simtypes.OperationMsg, []simtypes.FutureOperation, error) {
	msg := &types.MsgStartInference{InferenceId: randomID(r), Model: models[r.Intn(len(models))], PromptHash: simtypes.RandStringOfLength(r, 64)}
	tas, err := transferAgents(ctx, e.k)
	if err != nil {
		return skip(msg, "walk agents"), nil, err
	}
	if len(tas) == 0 || chance(r, 5) {
		return e.fromStranger(r, app, ctx, accs, chainID, msg, func(a string) { msg.Creator, msg.Executor = a, a }, e.isAgent(ctx),
			invalid(types.ErrNotTransferAgent, "start by an account that is no agent"))
	}
	ta := tas[r.Intn(len(tas))]
	acc, ok := simAccount(accs, ta.Address)
	if !ok {
		return skip(msg, "agent is not a sim account"), nil, nil
	}
	msg.Creator, msg.Executor = ta.Address, ta.Address // the executor is drawn below for the messages that get there
	switch n := r.Intn(100); {
	case n < 4:
		msg.InferenceId = "bad id!"
		return e.deliver(r, app, ctx, chainID, acc, msg, invalid(types.ErrInvalidInference, "malformed inference id"))
	case n < 10:
		if agent, id, found, err := e.ownInference(ctx, r, acc.Address); err != nil || found {
			if err != nil {
				return skip(msg, "walk inferences"), nil, err
			}
			msg.InferenceId, msg.Executor = id, agent.String()
			return e.deliver(r, app, ctx, chainID, acc, msg, invalid(types.ErrInferenceExists, "inference id the agent already used"))
		}
	}
	if ok, err := mayStart(ctx, e.k, ta); err != nil || !ok {
		if err != nil {
			return skip(msg, "agent standing"), nil, err
		}
		want := invalid(types.ErrAgentStopped, "agent stopped for the epoch")
		if ta.LeavingEpoch != 0 {
			want = invalid(types.ErrAgentLeaving, "agent leaving")
		}
		return e.deliver(r, app, ctx, chainID, acc, msg, want)
	}
	if chance(r, 6) {
		x, ok := stranger(r, accs, func(a sdk.AccAddress) bool {
			has, _ := e.k.EpochMemberIndex.Has(ctx, a)
			return has
		})
		if !ok {
			return skip(msg, "no account outside the group"), nil, nil
		}
		msg.Executor = x.Address.String()
		return e.deliver(r, app, ctx, chainID, acc, msg, invalid(types.ErrExecutorNotRoutable, "executor outside the epoch group"))
	}
	draw, err := e.k.RandomExecutor(ctx, msg.Model, r.Uint64(), ctx.BlockHeight())
	if err != nil {
		if errors.Is(err, types.ErrNoExecutor) {
			return skip(msg, "no executor for the model: "+err.Error()), nil, nil
		}
		return skip(msg, "selection failed"), nil, fmt.Errorf("draw an executor: %w", err)
	}
	msg.Executor = draw.Picked.Member.Address
	return e.deliver(r, app, ctx, chainID, acc, msg, e.predictStart(ctx, msg))
}

// predictStart is what the breaker's per-agent rules make of a start on
// an executor the selection drew: a scoped trip that keeps this agent
// out, or a probe slot it may not take, are documented refusals that
// selection (which knows no agent) cannot see. Both are read on a branch
// of the block's state that is thrown away.
func (e env) predictStart(ctx sdk.Context, msg *types.MsgStartInference) outcome {
	executor, err := sdk.AccAddressFromBech32(msg.Executor)
	if err != nil {
		return invalid(types.ErrInvalidInference, "undecodable executor")
	}
	branch, _ := ctx.CacheContext()
	params, err := e.k.Params.Get(branch)
	if err == nil && params.HealthCbEnforce {
		if err := e.k.Breaker().CheckScope(branch, executor, msg.Creator); errors.Is(err, types.ErrExecutorNotRoutable) {
			return invalid(types.ErrExecutorNotRoutable, "scoped trip keeps this agent off the executor")
		}
		if err := e.k.Breaker().ClaimProbe(branch, executor, msg.Creator, msg.InferenceId); errors.Is(err, types.ErrProbeTaken) {
			return invalid(types.ErrProbeTaken, "agent's earlier probe of this executor expired")
		}
	}
	return valid()
}

// ownInference is one of agent's stored inferences, started or closed.
func (e env) ownInference(ctx sdk.Context, r *rand.Rand, agent sdk.AccAddress) (sdk.AccAddress, string, bool, error) {
	set := e.idx.expiry
	if r.Intn(2) == 0 {
		set = e.idx.prune
	}
	a, id, found, err := pickInference(ctx, r, set)
	if err != nil || !found || !a.Equals(agent) {
		return nil, "", false, err
	}
	inf, err := e.k.Inferences().Get(ctx, a, id)
	if err != nil {
		return nil, "", false, err
	}
	executor, err := sdk.AccAddressFromBech32(inf.Executor)
	return executor, id, err == nil, err
}

// finishInference finishes a STARTED inference by its executor; invalid
// variants: a finish by an account that is not the executor, a finish of
// a closed inference, of an id the agent never used, with no agent named.
func (e env) finishInference(r *rand.Rand, app *baseapp.BaseApp, ctx sdk.Context, accs []simtypes.Account, chainID string,
) (simtypes.OperationMsg, []simtypes.FutureOperation, error) {
	msg := &types.MsgFinishInference{ResponseHash: simtypes.RandStringOfLength(r, 64)}
	set, closed := e.idx.expiry, chance(r, 8)
	if closed {
		set = e.idx.prune
	}
	agent, id, found, err := pickInference(ctx, r, set)
	if err != nil {
		return skip(msg, "walk inferences"), nil, err
	}
	if !found {
		return skip(msg, "no inference to finish"), nil, nil
	}
	inf, err := e.k.Inferences().Get(ctx, agent, id)
	if err != nil {
		return skip(msg, "load inference"), nil, err
	}
	exec, ok := simAccount(accs, inf.Executor)
	if !ok {
		return skip(msg, "executor is not a sim account"), nil, nil
	}
	if !closed && flaky(exec) && chance(r, 75) {
		return skip(msg, "flaky executor drops the inference (it will expire)"), nil, nil
	}
	msg.Creator, msg.InferenceId, msg.TransferAgent = inf.Executor, id, inf.TransferAgent
	switch n := r.Intn(100); {
	case closed:
		return e.deliver(r, app, ctx, chainID, exec, msg, invalid(types.ErrInferenceNotStarted, "finish of a closed inference"))
	case n < 6:
		other, ok := stranger(r, accs, func(a sdk.AccAddress) bool { return a.String() == inf.Executor })
		if !ok {
			return skip(msg, "no account but the executor"), nil, nil
		}
		msg.Creator = other.Address.String()
		return e.deliver(r, app, ctx, chainID, other, msg, invalid(types.ErrNotExecutor, "finish by an account that is not the executor"))
	case n < 10:
		msg.InferenceId = randomID(r)
		return e.deliver(r, app, ctx, chainID, exec, msg, invalid(types.ErrInferenceNotFound, "inference id the agent never used"))
	case n < 12:
		msg.TransferAgent = ""
		return e.deliver(r, app, ctx, chainID, exec, msg, invalid(types.ErrInvalidInference, "no transfer agent named"))
	}
	return e.deliver(r, app, ctx, chainID, exec, msg, valid())
}

// flaky marks one executor in four, by address, as one that finishes only
// a quarter of what it is asked: its inferences expire, the agents' misses
// corroborate each other, and the circuit breaker and the SPRT get to
// exclude, probe and restore it.
func flaky(acc simtypes.Account) bool { return acc.Address[len(acc.Address)-1]%4 == 0 }
