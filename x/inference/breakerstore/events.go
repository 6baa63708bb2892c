package breakerstore

import (
	"context"
	"fmt"

	"github.com/cosmos/cosmos-sdk/telemetry"
	sdk "github.com/cosmos/cosmos-sdk/types"
	"github.com/hashicorp/go-metrics"

	"github.com/inferenced/inferenced/x/inference/breaker"
	"github.com/inferenced/inferenced/x/inference/evidence"
	"github.com/inferenced/inferenced/x/inference/judge"
	"github.com/inferenced/inferenced/x/inference/types"
)

// MetricKey names a metric of the circuit breaker: every one is
// inference_breaker_<name...> in Prometheus.
func MetricKey(name ...string) []string {
	return append([]string{types.ModuleName, "breaker"}, name...)
}

var (
	metricTransitions = MetricKey("transitions")
	metricCapRefusals = MetricKey("cap_refusals")
	metricExcluded    = MetricKey("excluded")
	metricProbing     = MetricKey("probing")
	metricServiceOK   = MetricKey("service_samples", "ok")
	metricScoped      = MetricKey("scoped")
	metricServiceMiss = MetricKey("service_samples", "miss")
)

// emitTransition reports one state change as a typed event, a log line at
// Debug and a telemetry counter.
func (s Store) emitTransition(ctx context.Context, e entry, t breaker.Transition, height int64) error {
	address, err := s.ac.BytesToString(e.addr)
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
	telemetry.IncrCounterWithLabels(metricTransitions, 1, []metrics.Label{
		telemetry.NewLabel("from", t.From.String()), telemetry.NewLabel("to", t.To.String()),
		telemetry.NewLabel("reason", t.Reason.String()),
	})
	if err := sdkCtx.EventManager().EmitTypedEvent(ev); err != nil {
		return fmt.Errorf("emit breaker event: %w", err)
	}
	return nil
}

// reportGauges sets the gauges of EXCLUDED and PROBE executors. It reads the
// gates, one small entry per such executor.
func (s Store) reportGauges(ctx context.Context) error {
	var excluded, probing int
	if err := s.gates.Walk(ctx, nil, func(_ string, g uint64) (bool, error) {
		if breaker.Gate(g).Excluded() {
			excluded++
		} else {
			probing++
		}
		return false, nil
	}); err != nil {
		return fmt.Errorf("walk health gates: %w", err)
	}
	telemetry.SetGauge(float32(excluded), metricExcluded...) //nolint:forbidigo // telemetry takes float32; not consensus state
	telemetry.SetGauge(float32(probing), metricProbing...)   //nolint:forbidigo // telemetry takes float32; not consensus state
	return nil
}

func resetGauges() {
	telemetry.SetGauge(0, metricExcluded...)
	telemetry.SetGauge(0, metricProbing...)
}

var (
	metricMissesHeld    = MetricKey("traffic_misses_held")
	metricMissesCounted = MetricKey("traffic_misses_counted")
)

// emitHeld reports a traffic miss that nothing corroborates yet.
func (s Store) emitHeld(ctx context.Context, e entry, o judge.Outcome, height int64) error {
	address, err := s.ac.BytesToString(e.addr)
	if err != nil {
		return fmt.Errorf("encode executor: %w", err)
	}
	telemetry.IncrCounter(1, metricMissesHeld...)
	err = sdk.UnwrapSDKContext(ctx).EventManager().EmitTypedEvent(&types.EventTrafficMissHeld{
		Executor: address, Agent: o.Agent, StartHeight: o.Start, Probe: o.Probe,
		Held: e.ledger.Held(), Height: height,
	})
	if err != nil {
		return fmt.Errorf("emit held-miss event: %w", err)
	}
	return nil
}

// emitCounted reports a traffic miss that counts against its executor.
func (s Store) emitCounted(ctx context.Context, e entry, v evidence.Verdict, height int64) error {
	address, err := s.ac.BytesToString(e.addr)
	if err != nil {
		return fmt.Errorf("encode executor: %w", err)
	}
	telemetry.IncrCounter(1, metricMissesCounted...)
	err = sdk.UnwrapSDKContext(ctx).EventManager().EmitTypedEvent(&types.EventTrafficMissCounted{
		Executor: address, Agent: v.Miss.Agent, StartHeight: v.Miss.Start,
		ByAttestation: v.ByAttestation, WasHeld: v.WasHeld, Height: height,
	})
	if err != nil {
		return fmt.Errorf("emit counted-miss event: %w", err)
	}
	return nil
}

// emitScoped reports a traffic trip scoped to the agents whose misses
// counted (judge.Scoped): the executor stays HEALTHY for everyone else.
func (s Store) emitScoped(ctx context.Context, e entry, t breaker.Transition, height int64) error {
	address, err := s.ac.BytesToString(e.addr)
	if err != nil {
		return fmt.Errorf("encode executor: %w", err)
	}
	telemetry.IncrCounter(1, metricScoped...)
	err = sdk.UnwrapSDKContext(ctx).EventManager().EmitTypedEvent(&types.EventExecutorScoped{
		Executor: address, TransferAgents: e.scope.Agents, ScopedUntil: e.scope.Until, Scopes: e.rec.Scopes,
		Samples: t.Samples, Misses: t.Misses, Height: height,
	})
	if err != nil {
		return fmt.Errorf("emit scoped event: %w", err)
	}
	return nil
}
