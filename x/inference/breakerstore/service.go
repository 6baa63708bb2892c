package breakerstore

import (
	"context"
	"fmt"

	sdk "github.com/cosmos/cosmos-sdk/types"

	"github.com/inferenced/inferenced/x/inference/service"
)

// serviceView is one block's attested service rates as the step reads
// them: each member's rate in group order (nil: none this block), and the
// limits the peers' median sets. A rate above miss is a service miss; a
// rate at or below ok is a service ok, the canaries seeing the executor
// serving; a rate in between is no sample, since an ok restores an
// executor from PROBE and shields it from agents' traffic trips, so it
// must not be one noisy step under a miss.
type serviceView struct {
	rates    []service.Report
	miss, ok uint64
}

// viewService decodes the block's service rates once. Rates that do not
// fit the group (which the bundle's decoder rules out) are an error: the
// caller then applies no service sample.
func viewService(a Attestation, excess uint64) (serviceView, error) {
	if a.Members <= 0 || len(a.Service) == 0 {
		return serviceView{}, nil
	}
	median, known, err := service.PeerMedian(a.Service, a.Members)
	if err != nil || !known {
		return serviceView{}, err
	}
	rates, err := service.Decode(a.Service, a.Members)
	if err != nil {
		return serviceView{}, err
	}
	return serviceView{rates: rates, miss: uint64(median) + excess, ok: uint64(median) + excess/2}, nil
}

// sample is member i's service sample: whether there is one, and whether
// it is a miss.
func (v serviceView) sample(i int) (has, miss bool) {
	if i < 0 || i >= len(v.rates) || !v.rates[i].Known() {
		return false, false
	}
	r := uint64(v.rates[i])
	return r > v.miss || r <= v.ok, r > v.miss
}

// servingNow reports whether this block's service rates see the executor
// serving (a service ok): what a record created before the block's service
// samples are applied starts from, so that traffic evidence meeting an
// executor the canaries see serving is weighed as such from its first
// trip.
func (st *step) servingNow(addr sdk.AccAddress) (bool, error) {
	if st.service.rates == nil {
		return false, nil
	}
	i, member, err := st.s.reads.MemberIndex(st.ctx, addr)
	if err != nil || !member {
		return false, err
	}
	has, miss := st.service.sample(int(i))
	return has && !miss, nil
}

// serviceSamples maps the block's service view to samples: a miss for
// every executor whose rate exceeds the peers' median by more than the
// excess, an ok for every executor the breaker holds whose rate is within
// half of it (an ok for anyone else changes nothing). Executors without a
// rate, or in between, get no sample.
func (s Store) serviceSamples(ctx context.Context, v serviceView) ([]attestedSample, error) {
	var held map[uint32]bool
	var out []attestedSample
	for i := range v.rates {
		has, miss := v.sample(i)
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
