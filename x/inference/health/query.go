package health

import (
	"bytes"
	"context"
	"fmt"

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
	st := types.HealthStatus{
		Address: h.Address, State: h.State, Reason: h.Reason, Evidence: h.Evidence,
		TrafficSamples: ts, TrafficMisses: tm, AttestedSamples: as, AttestedMisses: am,
		CooldownBlocks: h.CooldownBlocks, SinceHeight: h.SinceHeight, ExcludedAt: h.ExcludedAt,
		Exclusions: h.Exclusions, CapRefusals: h.CapRefusals, ProbeInferenceId: h.ProbeInferenceId, ProbeAgent: h.ProbeAgent,
		HeldMisses: toLedger(h).Held(),
	}
	if r.State == breaker.Excluded {
		st.EligibleHeight = r.EligibleAt()
	}
	return st
}

// Status is an executor's breaker state as the ExecutorHealth query shows
// it; an executor without a record is HEALTHY with nothing on record.
func (s Store) Status(ctx context.Context, addr sdk.AccAddress, bp breaker.Params) (types.HealthStatus, error) {
	e, err := s.load(ctx, addr)
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

// Held is the executors the breaker holds a record on (few), in address
// order. Most blocks hold no one, and learn it from the record count
// without opening an iterator.
func (s Store) Held(ctx context.Context) ([]sdk.AccAddress, error) {
	count, err := s.heldCount(ctx)
	if err != nil {
		return nil, err
	}
	var held []sdk.AccAddress
	if count > 0 {
		if err := s.records.Walk(ctx, nil, func(addr sdk.AccAddress, _ types.ExecutorHealth) (bool, error) {
			held = append(held, addr)
			return false, nil
		}); err != nil {
			return nil, fmt.Errorf("walk breaker records: %w", err)
		}
	}
	// The step applies the queued outcomes before the attested samples,
	// so an executor with one queued may hold a record by then: its ok
	// must reach it too. Both lists are in address order: merged in one
	// pass, whatever their sizes.
	queued, err := s.queuedExecutors(ctx)
	if err != nil {
		return nil, err
	}
	held = mergeAddresses(held, queued)
	return held, nil
}

// mergeAddresses merges two address-ordered lists without repeats.
func mergeAddresses(a, b []sdk.AccAddress) []sdk.AccAddress {
	out := make([]sdk.AccAddress, 0, len(a)+len(b))
	for len(a) > 0 && len(b) > 0 {
		switch c := bytes.Compare(a[0], b[0]); {
		case c < 0:
			out, a = append(out, a[0]), a[1:]
		case c > 0:
			out, b = append(out, b[0]), b[1:]
		default:
			out, a, b = append(out, a[0]), a[1:], b[1:]
		}
	}
	return append(append(out, a...), b...)
}
