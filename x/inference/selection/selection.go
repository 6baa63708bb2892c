// Package selection is the rule that picks an executor for a model: the
// filter chain model -> status -> PoC phase (admission), then the health
// stage, the fallback applied once after the whole chain, and the seeded
// lottery over what is left. Pure: the keeper's consensus path and the
// query path's route tables (x/inference/routes) feed it the same inputs
// from the store, so they cannot disagree.
package selection

import (
	"errors"
	"fmt"
	"slices"

	errorsmod "cosmossdk.io/errors"

	"github.com/inferenced/inferenced/x/inference/lottery"
	"github.com/inferenced/inferenced/x/inference/types"
)

// refusal is why admission turned a member away. Any other error from
// admission is a store or state fault and is returned, never skipped.
type refusal struct{ reason string }

func (r refusal) Error() string { return r.reason }

func refuse(format string, args ...any) error { return refusal{reason: fmt.Sprintf(format, args...)} }

// IsRefusal reports whether err is admission turning a member away (as
// opposed to a fault).
func IsRefusal(err error) bool {
	var r refusal
	return errors.As(err, &r)
}

// Context is what admission needs besides the member, read once per
// selection.
type Context struct {
	InPocPhase bool
}

// StatusReader returns an epoch member's participant status; any error is
// a store or state fault.
type StatusReader func(types.EpochMember) (types.ParticipantStatus, error)

// Admit is the admission rule, with the member's status read by status
// only once the model check has passed (a member that does not serve the
// model is refused without a read). Selection on both paths and
// enforcement call it.
func Admit(rc Context, m types.EpochMember, model string, status StatusReader) error {
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
	if rc.InPocPhase && !m.PocAvailable {
		return refuse("executor %s does not serve during the PoC phase", m.Address)
	}
	return nil
}

// Pool admits, in order, the members that each visits for model: each
// calls admit once per member and stops at its first error. A refusal
// only leaves the member out; a fault is returned.
func Pool(rc Context, model string, status StatusReader, each func(admit func(types.EpochMember) error) error) ([]types.Candidate, error) {
	var pool []types.Candidate
	err := each(func(m types.EpochMember) error {
		switch err := Admit(rc, m, model, status); {
		case err == nil:
			pool = append(pool, types.Candidate{Member: m, Weight: m.Weight})
		case !IsRefusal(err):
			return err
		}
		return nil
	})
	return pool, err
}

// Filter is the health stage: it returns the admitted candidates it keeps,
// possibly at lower weights. It must be a function of the state it reads
// and the evaluated height only (the query path keeps its answer per
// committed height).
type Filter func(pool []types.Candidate) ([]types.Candidate, error)

// Selection is the outcome of the filter chain for a model.
type Selection struct {
	Pool []types.Candidate
	// Fallback is set when the health stage left nothing and Pool is the
	// pool from before it.
	Fallback bool
}

// NoExecutor is the answer when admission leaves nobody for model.
func NoExecutor(model string) error {
	return errorsmod.Wrapf(types.ErrNoExecutor, "no active executor with positive weight serves model %q now", model)
}

// Health runs the health stage (none in shadow mode: a nil filter) on the
// admitted pool and applies the fallback: if the stage leaves nothing, the
// pool from before it is returned, never an empty one.
func Health(model string, pool []types.Candidate, filter Filter) (Selection, error) {
	if len(pool) == 0 {
		return Selection{}, NoExecutor(model)
	}
	if filter == nil {
		return Selection{Pool: pool}, nil
	}
	healthy, err := filter(slices.Clone(pool))
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

// Weights are the pool's candidates' weights, in order.
func Weights(pool []types.Candidate) []uint64 {
	weights := make([]uint64, len(pool))
	for i, c := range pool {
		weights[i] = c.Weight
	}
	return weights
}

// DrawFrom draws from sel with seed. The same selection and seed always
// give the same executor.
func DrawFrom(sel Selection, seed uint64) (Draw, error) {
	weights := Weights(sel.Pool)
	total, err := lottery.Total(weights)
	if err != nil {
		return Draw{}, errorsmod.Wrap(types.ErrNoExecutor, err.Error())
	}
	// A selection never holds a weight-0 member, so the draw cannot meet an
	// all-zero total; any error is still reported, never a panic.
	i, err := lottery.Draw(weights, seed)
	if err != nil {
		return Draw{}, errorsmod.Wrap(types.ErrNoExecutor, err.Error())
	}
	return Draw{Picked: sel.Pool[i], Candidates: len(sel.Pool), TotalWeight: total, Fallback: sel.Fallback}, nil
}

// Table is a selection ready for many draws (running totals, binary
// search): the same answer as DrawFrom for every seed.
type Table struct {
	sel   Selection
	table lottery.Table
	err   error // the draw's refusal for every seed (a weight total the lottery refuses)
}

// NewTable prepares sel for drawing.
func NewTable(sel Selection) Table {
	t, err := lottery.NewTable(Weights(sel.Pool))
	return Table{sel: sel, table: t, err: err}
}

// Draw is DrawFrom(sel, seed).
func (t Table) Draw(seed uint64) (Draw, error) {
	if t.err != nil {
		return Draw{}, errorsmod.Wrap(types.ErrNoExecutor, t.err.Error())
	}
	i := t.table.Draw(seed)
	return Draw{Picked: t.sel.Pool[i], Candidates: len(t.sel.Pool), TotalWeight: t.table.Total(), Fallback: t.sel.Fallback}, nil
}
