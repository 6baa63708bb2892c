package breakerstore

import (
	"context"

	sdk "github.com/cosmos/cosmos-sdk/types"
	"github.com/cosmos/cosmos-sdk/types/query"

	"github.com/inferenced/inferenced/x/inference/breaker"
	"github.com/inferenced/inferenced/x/inference/types"
)

// statusOf is a breaker record as the queries show it, with each kind's
// window counts over that kind's configured window (bp's trip rules).
func statusOf(h types.ExecutorHealth, bp breaker.Params) types.HealthStatus {
	r := toBreaker(h)
	ts, tm := r.Windows[breaker.Traffic].Last(bp.Rules[breaker.Traffic].WindowSamples)
	as, am := r.Windows[breaker.Attested].Last(bp.Rules[breaker.Attested].WindowSamples)
	ss, sm := r.Windows[breaker.Service].Last(bp.Rules[breaker.Service].WindowSamples)
	st := types.HealthStatus{
		Address: h.Address, State: h.State, Reason: h.Reason, Evidence: h.Evidence,
		TrafficSamples: ts, TrafficMisses: tm, AttestedSamples: as, AttestedMisses: am,
		ServiceSamples: ss, ServiceMisses: sm,
		CooldownBlocks: h.CooldownBlocks, SinceHeight: h.SinceHeight, ExcludedAt: h.ExcludedAt,
		Exclusions: h.Exclusions, CapRefusals: h.CapRefusals, ProbeInferenceId: h.ProbeInferenceId, ProbeAgent: h.ProbeAgent,
		HeldMisses: toLedger(h).Held(), ScopedAgents: h.ScopedAgents, ScopedUntil: h.ScopedUntil,
	}
	if r.State == breaker.Excluded {
		st.EligibleHeight = r.EligibleAt()
	}
	return st
}

// Status is an executor's breaker state as the ExecutorHealth query shows
// it; an executor without a record is HEALTHY with nothing on record.
func (s Store) Status(ctx context.Context, addr sdk.AccAddress, bp breaker.Params) (types.HealthStatus, error) {
	e, err := s.loadStored(ctx, addr)
	if err != nil {
		return types.HealthStatus{}, err
	}
	h, err := e.proto(s.ac)
	if err != nil {
		return types.HealthStatus{}, err
	}
	return statusOf(h, bp), nil
}

// NotHealthy pages through the EXCLUDED and PROBE executors in address
// order. A bad page request is returned as an error of its own kind
// (query.CollectionFilteredPaginate's).
func (s Store) NotHealthy(ctx context.Context, page *query.PageRequest, bp breaker.Params) ([]types.HealthStatus, *query.PageResponse, error) {
	return query.CollectionFilteredPaginate(ctx, s.records, page,
		func(_ sdk.AccAddress, h types.ExecutorHealth) (bool, error) {
			return h.State != types.HEALTH_STATE_HEALTHY, nil
		},
		func(_ sdk.AccAddress, h types.ExecutorHealth) (types.HealthStatus, error) {
			return statusOf(h, bp), nil
		})
}
