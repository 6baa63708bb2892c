package breakerstore

import (
	"bytes"
	"context"
	"fmt"

	sdk "github.com/cosmos/cosmos-sdk/types"

	"github.com/inferenced/inferenced/x/inference/types"
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

// attestedSample is one attested verdict mapped to its executor.
type attestedSample struct {
	executor sdk.AccAddress
	miss     bool
}

// attestedSamples maps an attestation to executors, in group order. An ok
// for an executor without a breaker record or a queued outcome changes
// nothing: only misses and the executors the breaker holds or is about to
// hold are mapped to addresses. Samples that are not a packing of Members
// map to nothing (the decoder never lets them through; the length check
// keeps a caller's mistake from reading past them).
func (s Store) attestedSamples(ctx context.Context, a Attestation) ([]attestedSample, error) {
	if a.Members <= 0 || len(a.Samples) != verdict.PackedLen(a.Members) {
		return nil, nil
	}
	held, err := s.heldIndices(ctx)
	if err != nil {
		return nil, err
	}
	var out []attestedSample
	for i := range a.Members {
		v := verdict.At(a.Samples, i)
		switch {
		case v == verdict.Miss, v == verdict.OK && held[uint32(i)]:
		default:
			continue
		}
		m, err := s.reads.MemberAt(ctx, uint32(i))
		if err != nil {
			return nil, err
		}
		addr, err := s.ac.StringToBytes(m.Address)
		if err != nil {
			return nil, fmt.Errorf("epoch member %d address: %w", i, err)
		}
		out = append(out, attestedSample{executor: addr, miss: v == verdict.Miss})
	}
	return out, nil
}

// heldIndices are the group indices of the executors the breaker holds a
// record on or has outcomes queued for (those whose ok the step can
// change); the map is only looked up.
func (s Store) heldIndices(ctx context.Context) (map[uint32]bool, error) {
	addrs, err := s.held(ctx)
	if err != nil {
		return nil, err
	}
	out := make(map[uint32]bool, len(addrs))
	for _, addr := range addrs {
		i, ok, err := s.reads.MemberIndex(ctx, addr)
		if err != nil {
			return nil, fmt.Errorf("look up held executor %s: %w", addr, err)
		}
		if ok {
			out[i] = true
		}
	}
	return out, nil
}

// held is the executors the breaker holds a record on (few), in address
// order, and those with an outcome queued: the step applies the queued
// outcomes before the attested samples, so an executor with one queued
// may hold a record by then, and its ok must reach it too. Most blocks
// hold no one, and learn it from the record count without opening an
// iterator.
func (s Store) held(ctx context.Context) ([]sdk.AccAddress, error) {
	count, err := s.heldCount(ctx)
	if err != nil {
		return nil, err
	}
	var records []sdk.AccAddress
	if count > 0 {
		if err := s.records.Walk(ctx, nil, func(addr sdk.AccAddress, _ types.ExecutorHealth) (bool, error) {
			records = append(records, addr)
			return false, nil
		}); err != nil {
			return nil, fmt.Errorf("walk breaker records: %w", err)
		}
	}
	queued, err := s.queuedExecutors(ctx)
	if err != nil {
		return nil, err
	}
	return mergeAddresses(records, queued), nil
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
