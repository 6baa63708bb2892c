package keeper

import (
	"context"
	"errors"
	"fmt"
	"slices"

	errorsmod "cosmossdk.io/errors"

	sdk "github.com/cosmos/cosmos-sdk/types"

	"github.com/inferenced/inferenced/x/inference/lottery"
	"github.com/inferenced/inferenced/x/inference/types"
)

// HealthStage is the last stage of the selection filter chain, where the
// circuit breaker removes excluded executors and offers probes at reduced
// weight. It is the only stage the all-filtered-out fallback undoes.
type HealthStage interface {
	// Filter returns the admitted candidates, possibly with lower weights,
	// as of the block at height. It must be a function of the state ctx
	// reads and of height only: the query path keeps its answer per
	// committed height (a stage whose rule changes must be installed again
	// with SetHealthStage).
	Filter(ctx context.Context, height int64, pool []types.Candidate) ([]types.Candidate, error)
	// CheckStart refuses an inference start for model on an executor the
	// stage forbids, with an error wrapping types.ErrExecutorNotRoutable;
	// any other error is a fault and fails the start as such.
	CheckStart(ctx context.Context, executor sdk.AccAddress, model string) error
}

// refusal is why admission turned a member away. Any other error from
// admission is a store or state fault and is returned, never skipped.
type refusal struct{ reason string }

func (r refusal) Error() string { return r.reason }

func refuse(format string, args ...any) error { return refusal{reason: fmt.Sprintf(format, args...)} }

func isRefusal(err error) bool {
	var r refusal
	return errors.As(err, &r)
}

// routeContext is what every stage needs, read once per selection.
type routeContext struct {
	inPocPhase bool
}

// loadRouteContext reads the stage inputs as of the block at height.
func (k Keeper) loadRouteContext(ctx context.Context, height int64) (routeContext, error) {
	params, err := k.Params.Get(ctx)
	if err != nil {
		return routeContext{}, fmt.Errorf("load params: %w", err)
	}
	epoch, err := k.currentEpoch(ctx)
	if err != nil {
		return routeContext{}, err
	}
	return routeContext{inPocPhase: inPocPhase(epoch, params, height)}, nil
}

// admit runs the model -> status -> PoC stages on one member and says why it
// is refused. Selection and enforcement share it, so they cannot disagree.
func (k Keeper) admit(ctx context.Context, rc routeContext, m types.EpochMember, model string) error {
	return admitMember(rc, m, model, func(m types.EpochMember) (types.ParticipantStatus, error) {
		return k.memberStatus(ctx, m)
	})
}

// statusReader returns an epoch member's participant status; any error is
// a store or state fault.
type statusReader func(types.EpochMember) (types.ParticipantStatus, error)

// admitMember is the admission rule, with the member's status read by
// status only once the model check has passed (a member that does not serve
// the model is refused without a read). It is the one rule: admit, the
// consensus path, and the query path's route table both call it.
func admitMember(rc routeContext, m types.EpochMember, model string, status statusReader) error {
	if _, served := slices.BinarySearch(m.Models, model); !served {
		return refuse("executor %s does not serve model %q in this epoch", m.Address, model)
	}
	s, err := status(m)
	if err != nil {
		return err
	}
	if s != types.PARTICIPANT_STATUS_ACTIVE {
		return refuse("executor %s is %s", m.Address, s)
	}
	if m.Weight == 0 {
		return refuse("executor %s has weight 0 in this epoch", m.Address)
	}
	if rc.inPocPhase && !m.PocAvailable {
		return refuse("executor %s does not serve during the PoC phase", m.Address)
	}
	return nil
}

// memberStatus reads a member's participant record for its status.
func (k Keeper) memberStatus(ctx context.Context, m types.EpochMember) (types.ParticipantStatus, error) {
	addr, err := k.addressCodec.StringToBytes(m.Address)
	if err != nil {
		return 0, fmt.Errorf("epoch member address %q: %w", m.Address, err)
	}
	p, err := k.Participants.Get(ctx, addr)
	if err != nil {
		return 0, fmt.Errorf("executor %s: %w", m.Address, err)
	}
	return p.Status, nil
}

// Selection is the outcome of the filter chain for a model.
type Selection struct {
	Pool []types.Candidate
	// Fallback is set when the health stage left nothing and Pool is the
	// pool from before it.
	Fallback bool
}

// Candidates runs the whole filter chain for a model, as of the block at
// height. The fallback is applied once, after all stages: if the health stage
// leaves nothing, the pool from before the health stage is returned, never an
// empty one.
func (k Keeper) Candidates(ctx context.Context, model string, height int64) (Selection, error) {
	if err := types.ValidateModel(model); err != nil {
		return Selection{}, errorsmod.Wrap(types.ErrNoExecutor, err.Error())
	}
	rc, err := k.loadRouteContext(ctx, height)
	if err != nil {
		return Selection{}, err
	}
	status := func(m types.EpochMember) (types.ParticipantStatus, error) { return k.memberStatus(ctx, m) }
	var pool []types.Candidate
	err = k.EpochMembers.Walk(ctx, nil, func(_ uint32, m types.EpochMember) (bool, error) {
		switch err := admitMember(rc, m, model, status); {
		case err == nil:
			pool = append(pool, types.Candidate{Member: m, Weight: m.Weight})
		case !isRefusal(err):
			return true, err
		}
		return false, nil
	})
	if err != nil {
		return Selection{}, walkGroupError(err)
	}
	return applyHealthStage(ctx, k.seams.health, model, height, pool)
}

func walkGroupError(err error) error { return fmt.Errorf("walk epoch group: %w", err) }

func noExecutor(model string) error {
	return errorsmod.Wrapf(types.ErrNoExecutor, "no active executor with positive weight serves model %q now", model)
}

// applyHealthStage runs the health stage (none if stage is nil) on the
// admitted pool and applies the fallback.
func applyHealthStage(ctx context.Context, stage HealthStage, model string, height int64, pool []types.Candidate) (Selection, error) {
	if len(pool) == 0 {
		return Selection{}, noExecutor(model)
	}
	if stage == nil {
		return Selection{Pool: pool}, nil
	}
	healthy, err := stage.Filter(ctx, height, slices.Clone(pool))
	if err != nil {
		return Selection{}, fmt.Errorf("health stage: %w", err)
	}
	// A candidate offered at weight 0 could never be drawn: it is filtered out.
	healthy = slices.DeleteFunc(healthy, func(c types.Candidate) bool { return c.Weight == 0 })
	if len(healthy) == 0 {
		return Selection{Pool: pool, Fallback: true}, nil
	}
	return Selection{Pool: healthy}, nil
}

// Draw is a seeded lottery over a Selection.
type Draw struct {
	Picked      types.Candidate
	Candidates  int
	TotalWeight uint64
	Fallback    bool
}

// RandomExecutor draws an executor for model with the seed, for a start that
// will execute in the block at height. The same state and seed always give
// the same executor.
func (k Keeper) RandomExecutor(ctx context.Context, model string, seed uint64, height int64) (Draw, error) {
	sel, err := k.Candidates(ctx, model, height)
	if err != nil {
		return Draw{}, err
	}
	return drawFrom(sel, poolWeights(sel.Pool), seed)
}

func poolWeights(pool []types.Candidate) []uint64 {
	weights := make([]uint64, len(pool))
	for i, c := range pool {
		weights[i] = c.Weight
	}
	return weights
}

// drawFrom draws from sel, whose candidates' weights are weights.
func drawFrom(sel Selection, weights []uint64, seed uint64) (Draw, error) {
	total, err := lottery.Total(weights)
	if err != nil {
		return Draw{}, errorsmod.Wrap(types.ErrNoExecutor, err.Error())
	}
	// Candidates never holds a weight-0 member, so the draw cannot meet an
	// all-zero total; any error is still reported, never a panic.
	i, err := lottery.Draw(weights, seed)
	if err != nil {
		return Draw{}, errorsmod.Wrap(types.ErrNoExecutor, err.Error())
	}
	return Draw{Picked: sel.Pool[i], Candidates: len(sel.Pool), TotalWeight: total, Fallback: sel.Fallback}, nil
}

// CheckRoutable refuses, with the reason, an executor that selection could
// not have picked for model in this block. An executor the health stage
// refuses is still routable while the fallback is active for the model
// (the breaker excluded every candidate), as selection offers it then.
func (k Keeper) CheckRoutable(ctx context.Context, executor sdk.AccAddress, model string) error {
	member, isMember, err := k.memberOf(ctx, executor)
	if err != nil {
		return err
	}
	if !isMember {
		return errorsmod.Wrapf(types.ErrExecutorNotRoutable, "%s is not in the current epoch group", executor)
	}
	height := sdk.UnwrapSDKContext(ctx).BlockHeight()
	rc, err := k.loadRouteContext(ctx, height)
	if err != nil {
		return err
	}
	switch err := k.admit(ctx, rc, member, model); {
	case isRefusal(err):
		return errorsmod.Wrap(types.ErrExecutorNotRoutable, err.Error())
	case err != nil:
		return err
	}
	if k.seams.health == nil {
		return nil
	}
	refused := k.seams.health.CheckStart(ctx, executor, model)
	if refused == nil {
		return nil
	}
	if !errors.Is(refused, types.ErrExecutorNotRoutable) {
		return refused
	}
	// Rare (selection never offers it), so the full chain only runs here.
	sel, err := k.Candidates(ctx, model, height)
	if err != nil {
		return err
	}
	if sel.Fallback {
		return nil
	}
	return refused
}
