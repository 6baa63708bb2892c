package breakerstore

import (
	"bytes"
	"cmp"
	"fmt"
	"slices"

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

// attestedSample is one attested verdict mapped to its executor, at its
// index in the group.
type attestedSample struct {
	executor sdk.AccAddress
	index    uint32
	miss     bool
}

// heldMember is an executor the breaker holds, at its index in the group.
type heldMember struct {
	index uint32
	addr  sdk.AccAddress
}

// attestedSamples maps an attestation to executors, in group order. An ok
// for an executor without a breaker record or a queued outcome changes
// nothing: only misses and the executors the breaker holds or is about to
// hold are mapped to addresses. The address of an executor it holds is
// known (MemberIndex of that address gave its index: the keeper writes
// the index and the group from one list); a miss of another is mapped
// through MemberAt. Samples that are not a packing of Members map to
// nothing (the decoder never lets them through; the length check keeps a
// caller's mistake from reading past them).
func (st *step) attestedSamples(a Attestation) ([]attestedSample, error) {
	if a.Members <= 0 || len(a.Samples) != verdict.PackedLen(a.Members) {
		return nil, nil
	}
	held, err := st.heldAtStart()
	if err != nil {
		return nil, err
	}
	var out []attestedSample
	for i := range uint32(a.Members) {
		v := verdict.At(a.Samples, int(i))
		addr, isHeld := nextHeld(&held, i)
		switch {
		case v == verdict.Miss, v == verdict.OK && isHeld:
		default:
			continue
		}
		if !isHeld {
			if addr, err = st.memberAddress(i); err != nil {
				return nil, err
			}
		}
		out = append(out, attestedSample{executor: addr, index: i, miss: v == verdict.Miss})
	}
	return out, nil
}

// nextHeld drops the held members before index i from *held (in index
// order) and returns the one at i, if any.
func nextHeld(held *[]heldMember, i uint32) (sdk.AccAddress, bool) {
	for len(*held) > 0 && (*held)[0].index < i {
		*held = (*held)[1:]
	}
	if len(*held) > 0 && (*held)[0].index == i {
		return (*held)[0].addr, true
	}
	return nil, false
}

// memberAddress is the address of the group's member at index i.
func (st *step) memberAddress(i uint32) (sdk.AccAddress, error) {
	m, err := st.s.reads.MemberAt(st.ctx, i)
	if err != nil {
		return nil, err
	}
	addr, err := st.s.ac.StringToBytes(m.Address)
	if err != nil {
		return nil, fmt.Errorf("epoch member %d address: %w", i, err)
	}
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

// heldAtStart is the executors whose attested ok the step can change:
// those the breaker holds a record on when the step starts (few), and
// those with an outcome queued (the step applies the queued outcomes
// before the attested samples, so an executor with one queued may hold a
// record by then, and its ok must reach it too), in index order. Most
// blocks hold no one, and learn it from the record count without opening
// an iterator.
func (st *step) heldAtStart() ([]heldMember, error) {
	if err := st.w.walk(); err != nil {
		return nil, err
	}
	records := make([]sdk.AccAddress, len(st.w.found))
	for i, f := range st.w.found {
		records[i] = f.addr
	}
	queued, err := st.s.queuedExecutors(st.ctx)
	if err != nil {
		return nil, err
	}
	return st.indexed(mergeAddresses(records, queued))
}

// heldNow is the executors the breaker holds a record on now, in index
// order: the records the step started from that it has not dropped, and
// those it created.
func (st *step) heldNow() ([]heldMember, error) {
	if err := st.w.walk(); err != nil {
		return nil, err
	}
	var addrs []sdk.AccAddress
	for _, f := range st.w.found {
		if sl, ok := st.w.slotOf[string(f.addr)]; ok && !sl.cur.stored {
			continue
		}
		addrs = append(addrs, f.addr)
	}
	for _, sl := range st.w.slots {
		if _, found := st.w.foundAt[string(sl.cur.addr)]; sl.cur.stored && !found {
			addrs = append(addrs, sl.cur.addr)
		}
	}
	return st.indexed(addrs)
}

// indexed is the members among addrs at their group indices, in index
// order.
func (st *step) indexed(addrs []sdk.AccAddress) ([]heldMember, error) {
	out := make([]heldMember, 0, len(addrs))
	for _, addr := range addrs {
		i, ok, err := st.memberIndexOf(addr)
		if err != nil {
			return nil, fmt.Errorf("look up held executor %s: %w", addr, err)
		}
		if ok {
			out = append(out, heldMember{index: i, addr: addr})
		}
	}
	slices.SortFunc(out, func(a, b heldMember) int {
		return cmp.Or(cmp.Compare(a.index, b.index), bytes.Compare(a.addr, b.addr))
	})
	return out, nil
}

// mergeAddresses merges two address-ordered lists without repeats, in one
// pass whatever their sizes.
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
