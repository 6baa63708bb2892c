package breakerstore

import (
	"context"
	"fmt"

	sdk "github.com/cosmos/cosmos-sdk/types"

	"github.com/inferenced/inferenced/x/inference/service"
)

// viewService decodes the block's service rates once (service.NewView).
// Rates that do not fit the group (which the bundle's decoder rules out)
// are an error: the caller then applies no service sample.
func viewService(a Attestation, excess uint64) (service.View, error) {
	return service.NewView(a.Service, a.Members, excess)
}

// servingNow reports whether this block's service rates see the executor
// serving (a service ok): what a record created before the block's service
// samples are applied starts from, so that traffic evidence meeting an
// executor the canaries see serving is weighed as such from its first
// trip.
func (st *step) servingNow(addr sdk.AccAddress) (bool, error) {
	if st.service.Rates == nil {
		return false, nil
	}
	i, member, err := st.s.reads.MemberIndex(st.ctx, addr)
	if err != nil || !member {
		return false, err
	}
	has, miss := st.service.Sample(int(i))
	return has && !miss, nil
}

// serviceSamples maps the block's service view to samples: a miss for
// every executor whose rate exceeds the peers' median by more than the
// excess, an ok for every executor the breaker holds whose rate is within
// half of it (an ok for anyone else changes nothing). Executors without a
// rate, or in between, get no sample.
func (s Store) serviceSamples(ctx context.Context, v service.View) ([]attestedSample, error) {
	var held map[uint32]bool
	var out []attestedSample
	for i := range v.Rates {
		has, miss := v.Sample(i)
		if !has {
			continue
		}
		if !miss {
			if held == nil {
				var err error
				if held, err = s.heldIndices(ctx); err != nil {
					return nil, err
				}
			}
			if !held[uint32(i)] {
				continue
			}
		}
		m, err := s.reads.MemberAt(ctx, uint32(i))
		if err != nil {
			return nil, err
		}
		addr, err := s.ac.StringToBytes(m.Address)
		if err != nil {
			return nil, fmt.Errorf("epoch member %d address: %w", i, err)
		}
		out = append(out, attestedSample{executor: addr, miss: miss})
	}
	return out, nil
}
