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

// PeerMedian is the lower median, over the executors of a list of n
// attested service rates (service.Encode) that have a rate, of those
// rates, and whether any has one. Executors, not validators, are the
// peers: a rise every validator sees on every executor (a network-wide
// fault, or the validators' own) raises it alike for all.
func PeerMedian(rates []byte, n int) (service.Report, bool, error) {
	var counts [service.MaxRate + 1]int
	listed, unknown := 0, 0
	err := service.Each(rates, n, func(_ int, r service.Report) {
		listed++
		if r == service.Unknown {
			unknown++
			return
		}
		counts[r]++
	})
	if err != nil {
		return 0, false, err
	}
	if len(rates) == 0 {
		return 0, false, nil
	}
	counts[0] += n - listed
	known := n - unknown
	if known == 0 {
		return 0, false, nil
	}
	cum := 0
	for r, c := range counts {
		if cum += c; 2*cum >= known {
			return service.Report(r), true, nil
		}
	}
	return 0, false, nil // unreachable: the counts sum to known
}

// serviceSamples maps the block's attested service rates to samples: a miss
// for every executor whose rate exceeds the peers' median by more than
// excess points, an ok for every other executor with a rate that the
// breaker holds (an ok for anyone else changes nothing). Executors without
// a rate get no sample.
func (s Store) serviceSamples(ctx context.Context, a Attestation, excess uint64) ([]serviceSample, error) {
	if a.Members <= 0 || len(a.Service) == 0 {
		return nil, nil
	}
	median, ok, err := PeerMedian(a.Service, a.Members)
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
