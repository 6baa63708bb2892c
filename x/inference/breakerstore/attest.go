package breakerstore

import (
	"fmt"

	sdk "github.com/cosmos/cosmos-sdk/types"

	"github.com/inferenced/inferenced/x/inference/verdict"
)

// Attestation is one block's attestations about the current epoch group:
// the liveness samples (the validators' majority verdict on each member,
// packed in group order, verdict.Pack) and the service rates (the
// power-weighted median of the failed share of each member's canaries,
// service.Encode), as the block's health bundle carries them, or none. The
// keeper passes only attestations about the current group; the bundle's
// decoder has already checked both encodings (proposals.Decode).
type Attestation struct {
	Members int
	Samples []byte
	Service []byte
}

// attestedSample is one attested verdict of the group's member at index,
// with its address when the mapping knew it (nil: resolved when the step
// visits it, by MemberAt; a quiet executor's sample is not visited).
type attestedSample struct {
	executor sdk.AccAddress
	index    uint32
	miss     bool
}

// attestedSamples maps an attestation to samples, in group order. An ok
// for an executor without a breaker record or a queued outcome changes
// nothing: only misses and the executors the breaker holds (the held
// bits, as the step starts) or is about to hold (an outcome queued: the
// step applies the queued outcomes before the attested samples, so its
// ok must reach the record it may hold by then) are mapped. A held
// member's address is looked up only when the step visits it; another
// miss's is looked up now, so a packing that names a member the group
// lacks costs the block its attested samples before any is applied (a
// held bit is a member: heldBits). Samples that are not a packing of
// Members map to nothing (the decoder never lets them through; the
// length check keeps a caller's mistake from reading past them).
func (st *step) attestedSamples(a Attestation) ([]attestedSample, error) {
	if a.Members <= 0 || len(a.Samples) != verdict.PackedLen(a.Members) {
		return nil, nil
	}
	queued, queuedBits, err := st.queuedMembers()
	if err != nil {
		return nil, err
	}
	held, interest := st.w.bits.held, st.w.bits.held
	if queuedBits != nil {
		interest = held.union(queuedBits)
	}
	var out []attestedSample
	// Only a miss, or an executor held or queued, can be a sample.
	err = eachMissOrIn(a.Samples, a.Members, interest, func(i uint32) error {
		v := verdict.At(a.Samples, int(i))
		addr, isQueued := queued[i]
		isHeld := held.has(i)
		switch {
		case v == verdict.Miss, v == verdict.OK && (isHeld || isQueued):
		default:
			return nil
		}
		if !isHeld && !isQueued {
			var err error
			if addr, err = st.memberAddress(i); err != nil {
				return err
			}
		}
		out = append(out, attestedSample{executor: addr, index: i, miss: v == verdict.Miss})
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// queuedMembers are the executors with an outcome queued, by group index
// (only looked up), and their indices as a set.
func (st *step) queuedMembers() (map[uint32]sdk.AccAddress, bitmap, error) {
	queued, err := st.s.queuedExecutors(st.ctx)
	if err != nil || len(queued) == 0 {
		return nil, nil, err
	}
	out := make(map[uint32]sdk.AccAddress, len(queued))
	var indices bitmap
	for _, addr := range queued {
		i, member, err := st.memberIndexOf(addr)
		if err != nil {
			return nil, nil, fmt.Errorf("look up held executor %s: %w", addr, err)
		}
		if member {
			out[i] = addr
			indices = indices.with(i)
		}
	}
	return out, indices, nil
}

// memberAddress is the address of the group's member at index i; the
// step knows its index from then on.
func (st *step) memberAddress(i uint32) (sdk.AccAddress, error) {
	m, err := st.s.reads.MemberAt(st.ctx, i)
	if err != nil {
		return nil, err
	}
	addr, err := st.s.ac.StringToBytes(m.Address)
	if err != nil {
		return nil, fmt.Errorf("epoch member %d address: %w", i, err)
	}
	st.memberIndex[string(addr)] = memberAt{index: i, member: true}
	return addr, nil
}

// memberIndexOf is MemberIndex, asked once per executor per step.
func (st *step) memberIndexOf(addr sdk.AccAddress) (uint32, bool, error) {
	if m, ok := st.memberIndex[string(addr)]; ok {
		return m.index, m.member, nil
	}
	i, member, err := st.s.reads.MemberIndex(st.ctx, addr)
	if err != nil {
		return 0, false, err
	}
	st.memberIndex[string(addr)] = memberAt{index: i, member: member}
	return i, member, nil
}
