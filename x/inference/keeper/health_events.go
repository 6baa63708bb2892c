package keeper

import (
	"context"
	"fmt"

	"github.com/cosmos/cosmos-sdk/telemetry"
	sdk "github.com/cosmos/cosmos-sdk/types"
	"github.com/hashicorp/go-metrics"

	"github.com/inferenced/inferenced/x/inference/breaker"
	"github.com/inferenced/inferenced/x/inference/types"
)

// emitTransition reports one breaker state change as a typed event, a log
// line at Debug and a telemetry counter.
func (k Keeper) emitTransition(ctx context.Context, e healthEntry, t breaker.Transition, height int64) error {
	address, err := k.addressCodec.BytesToString(e.addr)
	if err != nil {
		return fmt.Errorf("encode executor: %w", err)
	}
	var rate uint32
	if t.Samples > 0 {
		rate = t.Misses * 100 / t.Samples
	}
	ev := &types.EventExecutorHealthChanged{
		Executor: address, From: types.HealthState(t.From), To: types.HealthState(t.To),
		Reason: types.HealthReason(t.Reason), Kind: types.SampleKind(t.Kind),
		Samples: t.Samples, Misses: t.Misses, MissRatePct: rate,
		CooldownBlocks: e.rec.Cooldown, Exclusions: e.rec.Exclusions, Height: height,
	}
	if t.To == breaker.Excluded {
		ev.EligibleHeight = e.rec.EligibleAt()
	}
	sdkCtx := sdk.UnwrapSDKContext(ctx)
	sdkCtx.Logger().Debug("breaker transition", "module", types.ModuleName, "executor", address,
		"from", t.From.String(), "to", t.To.String(), "reason", t.Reason.String(), "height", height)
	telemetry.IncrCounterWithLabels([]string{types.ModuleName, "breaker", "transitions"}, 1, []metrics.Label{
		telemetry.NewLabel("from", t.From.String()), telemetry.NewLabel("to", t.To.String()),
		telemetry.NewLabel("reason", t.Reason.String()),
	})
	if err := sdkCtx.EventManager().EmitTypedEvent(ev); err != nil {
		return fmt.Errorf("emit breaker event: %w", err)
	}
	return nil
}

// reportHealthGauges sets the gauges of EXCLUDED and PROBE executors. It
// reads the gates, one small entry per such executor.
func (k Keeper) reportHealthGauges(ctx context.Context) error {
	var excluded, probing int
	if err := k.HealthGate.Walk(ctx, nil, func(_ string, g uint64) (bool, error) {
		if g&3 == gateExcluded {
			excluded++
		} else {
			probing++
		}
		return false, nil
	}); err != nil {
		return fmt.Errorf("walk health gates: %w", err)
	}
	telemetry.SetGauge(float32(excluded), types.ModuleName, "breaker", "excluded")
	telemetry.SetGauge(float32(probing), types.ModuleName, "breaker", "probing")
	return nil
}

func resetHealthGauges() {
	telemetry.SetGauge(0, types.ModuleName, "breaker", "excluded")
	telemetry.SetGauge(0, types.ModuleName, "breaker", "probing")
}
