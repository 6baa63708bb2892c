package breakerstore

import (
	"context"
	"fmt"

	sdk "github.com/cosmos/cosmos-sdk/types"

	"github.com/inferenced/inferenced/appmetrics"
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

// Edges are the (from, to, reason) transitions the breaker makes
// (breaker.Observe, breaker.Promote): their series of
// inference_breaker_transitions exist at zero from the start.
var Edges = []breaker.Transition{
	{From: breaker.Healthy, To: breaker.Excluded, Reason: breaker.ReasonMissRate},
	{From: breaker.Healthy, To: breaker.Excluded, Reason: breaker.ReasonConsecutiveMisses},
	{From: breaker.Excluded, To: breaker.Probe, Reason: breaker.ReasonCooldownPassed},
	{From: breaker.Probe, To: breaker.Excluded, Reason: breaker.ReasonProbeMissed},
	{From: breaker.Probe, To: breaker.Healthy, Reason: breaker.ReasonProbeSucceeded},
	{From: breaker.Probe, To: breaker.Healthy, Reason: breaker.ReasonAttestedOK},
	{From: breaker.Probe, To: breaker.Healthy, Reason: breaker.ReasonServiceOK},
}

func edgeLabels(t breaker.Transition) []string {
	return []string{t.From.String(), t.To.String(), t.Reason.String()}
}

func knownEdges() [][]string {
	out := make([][]string, len(Edges))
	for i, t := range Edges {
		out[i] = edgeLabels(t)
	}
	return out
}

// The breaker's series (appmetrics: each exists at zero from the start).
var (
	seriesTransitions = appmetrics.NewCounterVec(MetricKey("transitions"), "breaker state transitions",
		[]string{"from", "to", "reason"}, knownEdges())
	seriesCapRefusals   = appmetrics.NewCounter(MetricKey("cap_refusals"), "exclusions refused by health_cb_max_excluded_weight_pct")
	seriesExcluded      = appmetrics.NewGauge(MetricKey("excluded"), "executors EXCLUDED after the block's breaker step")
	seriesProbing       = appmetrics.NewGauge(MetricKey("probing"), "executors in PROBE after the block's breaker step")
	seriesServiceOK     = appmetrics.NewCounter(MetricKey("service_samples", "ok"), "service samples applied, ok")
	seriesServiceMiss   = appmetrics.NewCounter(MetricKey("service_samples", "miss"), "service samples applied, miss (canaries failing against the peers' median)")
	seriesScoped        = appmetrics.NewCounter(MetricKey("scoped"), "traffic trips of an executor the canaries see serving, scoped to the failing agents")
	seriesMissesHeld    = appmetrics.NewCounter(MetricKey("traffic_misses_held"), "traffic misses held for corroboration")
	seriesMissesCounted = appmetrics.NewCounter(MetricKey("traffic_misses_counted"), "traffic misses counted against their executor")
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
	seriesTransitions.WithLabelValues(edgeLabels(t)...).Inc()
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
	appmetrics.Set(seriesExcluded, excluded)
	appmetrics.Set(seriesProbing, probing)
	return nil
}

func resetGauges() {
	seriesExcluded.Set(0)
	seriesProbing.Set(0)
}

// emitHeld reports a traffic miss that nothing corroborates yet.
func (s Store) emitHeld(ctx context.Context, e entry, o judge.Outcome, height int64) error {
	address, err := s.ac.BytesToString(e.addr)
	if err != nil {
		return fmt.Errorf("encode executor: %w", err)
	}
	seriesMissesHeld.Inc()
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
	seriesMissesCounted.Inc()
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
	seriesScoped.Inc()
	err = sdk.UnwrapSDKContext(ctx).EventManager().EmitTypedEvent(&types.EventExecutorScoped{
		Executor: address, TransferAgents: e.scope.Agents, ScopedUntil: e.scope.Until, Scopes: e.rec.Scopes,
		Samples: t.Samples, Misses: t.Misses, Height: height,
	})
	if err != nil {
		return fmt.Errorf("emit scoped event: %w", err)
	}
	return nil
}
