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
// ok must reach the record it may hold by then) are mapped. The misses of
// held executors without a queued outcome are returned as a set
// (heldMisses, applyAttestedSamples); the others as samples. A held
// member's address is looked up only when the step visits it; another
// miss's is looked up now, so a packing that names a member the group
// lacks costs the block its attested samples before any is applied (a
// held bit is a member: heldBits). Samples that are not a packing of
// Members map to nothing (the decoder never lets them through; the
// length check keeps a caller's mistake from reading past them).
func (st *step) attestedSamples(a Attestation) (one []attestedSample, heldMisses bitmap, err error) {
	if a.Members <= 0 || len(a.Samples) != verdict.PackedLen(a.Members) {
		return nil, nil, nil
	}
	queued, queuedBits, err := st.queuedMembers()
	if err != nil {
		return nil, nil, err
	}
	heldMisses, err = splitAttested(a.Samples, a.Members, st.w.bits.held, queuedBits, func(i uint32, miss bool) error {
		addr, isQueued := queued[i]
		if !isQueued && !st.w.bits.held.has(i) {
			if addr, err = st.memberAddress(i); err != nil {
				return err
			}
		}
		one = append(one, attestedSample{executor: addr, index: i, miss: miss})
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	return one, heldMisses, nil
}

// applyAttestedSamples applies the block's attested samples in group
// order: each of one, and a miss for each member of heldMisses.
func (st *step) applyAttestedSamples(one []attestedSample, heldMisses bitmap) error {
	return st.eachAttested(one, heldMisses, st.applyAttested)
}

// eachAttested counts and applies, with apply, the samples one and a miss
// for each member of heldMisses, merged in group order; a quiet member's
// miss is only carried by the streaks item (skip, as visit would), the
// common case in a long outage: a bit, not a visit.
func (st *step) eachAttested(one []attestedSample, heldMisses bitmap, apply func(attestedSample) error) error {
	counted := func(a attestedSample) error {
		if a.miss {
			st.out.AttestedMisses++
		} else {
			st.out.AttestedOKs++
		}
		return apply(a)
	}
	err := heldMisses.each(func(i uint32) error {
		for len(one) > 0 && one[0].index < i {
			if err := counted(one[0]); err != nil {
				return err
			}
			one = one[1:]
		}
		if st.w.quiet(i) {
			st.out.AttestedMisses++
			st.w.skip(i, true, false)
			return nil
		}
		return counted(attestedSample{index: i, miss: true})
	})
	if err != nil {
		return err
	}
	for _, a := range one {
		if err := counted(a); err != nil {
			return err
		}
	}
	return nil
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
