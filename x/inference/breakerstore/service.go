package breakerstore

import (
	"context"
	"fmt"

	"github.com/inferenced/inferenced/x/inference/service"
)

// serviceSample is one block's service sample for one executor: a miss
// when the rate the validators' canaries attest exceeds the peers' median
// by more than the excess.
type serviceSample = attestedSample

// serviceSamples maps the block's attested service rates to samples: a miss
// for every executor whose rate exceeds the peers' median by more than
// excess points, an ok for every other executor with a rate that the
// breaker holds (an ok for anyone else changes nothing). Executors without
// a rate get no sample.
func (s Store) serviceSamples(ctx context.Context, a Attestation, excess uint64) ([]serviceSample, error) {
	if a.Members <= 0 || len(a.Service) == 0 {
		return nil, nil
	}
	median, ok, err := service.PeerMedian(a.Service, a.Members)
	if err != nil || !ok {
		return nil, err
	}
	limit := uint64(median) + excess // a miss is a rate above it
	rates, err := service.Decode(a.Service, a.Members)
	if err != nil {
		return nil, err
	}
	var held map[uint32]bool
	var out []serviceSample
	for i, r := range rates {
		if !r.Known() {
			continue
		}
		miss := uint64(r) > limit
		if !miss {
			if held == nil {
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
		out = append(out, serviceSample{executor: addr, miss: miss})
	}
	return out, nil
}
