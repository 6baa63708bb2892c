package breakerstore

import (
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
	i, member, err := st.memberIndexOf(addr)
	if err != nil || !member {
		return false, err
	}
	return st.servingAt(i), nil
}

// servingAt is servingNow of the group's member at index i.
func (st *step) servingAt(i uint32) bool {
	has, miss := st.service.Sample(int(i))
	return has && !miss
}

// serviceSamples maps the block's service view to samples: a miss for
// every executor whose rate exceeds the peers' median by more than the
// excess, an ok for every executor the breaker holds (now, the held bits
// as the step's saves left them: its traffic and attested samples may
// have given some a record) whose rate is within half of it (an ok for
// anyone else changes nothing). Executors without a rate, or in between,
// get no sample. As in attestedSamples, only a miss of a member not held
// is looked up now.
func (st *step) serviceSamples() ([]attestedSample, error) {
	var out []attestedSample
	held := st.w.bits.held
	// A rate of 0% is an ok, which changes nothing for an executor the
	// breaker does not hold.
	err := eachRatedOrIn(st.service.Rates, held, func(i uint32) error {
		has, miss := st.service.Sample(int(i))
		if !has {
			return nil
		}
		isHeld := held.has(i)
		if !miss && !isHeld {
			return nil
		}
		var addr sdk.AccAddress
		if !isHeld {
			var err error
			if addr, err = st.memberAddress(i); err != nil {
				return err
			}
		}
		out = append(out, attestedSample{executor: addr, index: i, miss: miss})
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
