package keeper

import (
	"context"
	"fmt"

	"github.com/inferenced/inferenced/x/inference/breaker"
)

// A gate is an EXCLUDED or PROBE executor's routing state in one integer:
// the eligible height shifted left by two, or'ed with a code. HEALTHY
// executors have no gate.
const (
	gateExcluded   = 1
	gateProbeFree  = 2
	gateProbeTaken = 3
)

// gateOf returns the gate of a record and whether it has one.
func gateOf(r breaker.Record) (uint64, bool) {
	switch {
	case r.State == breaker.Excluded:
		return uint64(r.EligibleAt())<<2 | gateExcluded, true
	case r.State == breaker.Probe && r.ProbeInFlight:
		return gateProbeTaken, true
	case r.State == breaker.Probe:
		return gateProbeFree, true
	}
	return 0, false
}

// gateOffersProbe reports whether selection at height offers the executor
// behind gate g as a probe: a PROBE with its slot free, or an EXCLUDED one
// whose cooldown has passed by height (the block's first step promotes it
// before any start runs). Otherwise the executor is out.
func gateOffersProbe(g uint64, height int64) bool {
	switch g & 3 {
	case gateProbeFree:
		return true
	case gateExcluded:
		return height >= int64(g>>2)
	}
	return false
}

// syncGate keeps the gate of address in step with a record change.
func (k Keeper) syncGate(ctx context.Context, address string, before, after healthEntry) error {
	was, hadGate := gateOf(before.rec)
	if !before.stored {
		hadGate = false
	}
	now, hasGate := gateOf(after.rec)
	switch {
	case hasGate && (!hadGate || now != was):
		if err := k.HealthGate.Set(ctx, address, now); err != nil {
			return fmt.Errorf("store health gate: %w", err)
		}
	case !hasGate && hadGate:
		if err := k.HealthGate.Remove(ctx, address); err != nil {
			return fmt.Errorf("drop health gate: %w", err)
		}
	}
	return nil
}
