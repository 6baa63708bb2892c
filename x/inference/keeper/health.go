package keeper

import (
	"context"
	"errors"
	"fmt"

	"cosmossdk.io/collections"

	sdk "github.com/cosmos/cosmos-sdk/types"

	"github.com/inferenced/inferenced/x/inference/agents"
	"github.com/inferenced/inferenced/x/inference/breakerstore"
	"github.com/inferenced/inferenced/x/inference/inferences"
	"github.com/inferenced/inferenced/x/inference/judge"
	"github.com/inferenced/inferenced/x/inference/types"
)

// ApplyHealth is the breaker's one step per block and the one call the
// app's pre-blocker makes into the module: the block's attestations as its
// health bundle carries them (the epoch they attest about, the size of
// that epoch's group, the packed liveness verdicts and the encoded service
// rates; none when the block has no bundle), then breakerstore.Store.Step
// (promotions due now, the traffic outcomes queued by the previous block,
// the attested samples, the service samples), then the miss verdicts the
// step reached, in order: a counted miss runs the SPRT, and every verdict
// updates its agent's standing (judge.Standing). It returns how many
// attested liveness samples it applied.
//
// Samples about another epoch than the current one are dropped: the group
// they index has been replaced, so a boundary between epochs never applies
// a verdict to the wrong executor. Samples whose group size is not the
// current group's (which ProcessProposal rules out) are logged and
// dropped; the step still runs.
func (k Keeper) ApplyHealth(ctx context.Context, epoch uint64, members int, samples, service []byte) (oks, misses int, err error) {
	if err := k.recordSamples(ctx, epoch, members, samples); err != nil {
		return 0, 0, err
	}
	att, err := k.attestation(ctx, epoch, members, samples, service)
	if err != nil {
		return 0, 0, err
	}
	params, err := k.Params.Get(ctx)
	if err != nil {
		return 0, 0, fmt.Errorf("load params: %w", err)
	}
	applied, err := k.breaker.Step(ctx, breakerstore.Block{Params: params, Attested: att})
	if err != nil {
		return 0, 0, err
	}
	for _, v := range applied.Misses {
		// A miss counted while the validators' canaries saw the executor
		// serving is not the SPRT's: no set of agents can make such an
		// executor INACTIVE.
		if v.Effect.Kind == judge.Counted && !v.Effect.Serving {
			if err := k.countOutcome(ctx, v.Executor, false); err != nil {
				return 0, 0, err
			}
		}
		agent, charge, corroborated, _ := judge.Standing(v.Effect)
		if err := k.agents.Judged(ctx, agent, charge, corroborated); err != nil {
			return 0, 0, err
		}
	}
	return applied.AttestedOKs, applied.AttestedMisses, nil
}

// attestation is the block's samples if they attest about the current
// epoch's group, none otherwise.
func (k Keeper) attestation(ctx context.Context, epochIndex uint64, members int, samples, service []byte) (breakerstore.Attestation, error) {
	if len(samples) == 0 && len(service) == 0 {
		return breakerstore.Attestation{}, nil
	}
	epoch, err := k.currentEpoch(ctx)
	if errors.Is(err, types.ErrNoEpoch) {
		return breakerstore.Attestation{}, nil
	}
	if err != nil {
		return breakerstore.Attestation{}, err
	}
	if epoch.Index != epochIndex {
		return breakerstore.Attestation{}, nil
	}
	if members != int(epoch.Members) {
		sdk.UnwrapSDKContext(ctx).Logger().Error("health bundle does not fit the epoch group; no attested samples applied",
			"module", types.ModuleName, "epoch", epochIndex, "bundle_members", members, "group_members", epoch.Members)
		return breakerstore.Attestation{}, nil
	}
	return breakerstore.Attestation{Members: members, Samples: samples, Service: service}, nil
}

// reads is what the keeper lets the stores it composes read
// (breakerstore.Reads, agents.Reads, inferences.Reads): its own
// collections, never written through here. It is shared by pointer: the
// stores call it for every member they look up, and a Keeper is a large
// value to copy on each call.
type reads struct{ k Keeper }

var (
	_ breakerstore.Reads = (*reads)(nil)
	_ agents.Reads       = (*reads)(nil)
	_ inferences.Reads   = (*reads)(nil)
)

func (r *reads) MemberIndex(ctx context.Context, addr sdk.AccAddress) (uint32, bool, error) {
	i, err := r.k.EpochMemberIndex.Get(ctx, addr)
	if errors.Is(err, collections.ErrNotFound) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, fmt.Errorf("look up epoch member: %w", err)
	}
	return i, true, nil
}

func (r *reads) MemberAt(ctx context.Context, index uint32) (types.EpochMember, error) {
	m, err := r.k.EpochMembers.Get(ctx, index)
	if err != nil {
		return types.EpochMember{}, fmt.Errorf("epoch member %d: %w", index, err)
	}
	return m, nil
}

func (r *reads) ModelWeight(ctx context.Context, model string) (uint64, error) {
	w, err := r.k.ModelWeights.Get(ctx, model)
	if errors.Is(err, collections.ErrNotFound) {
		return 0, nil
	}
	return w, err
}

func (r *reads) EpochIndex(ctx context.Context) (uint64, error) { return r.k.epochIndexOrZero(ctx) }

func (r *reads) EpochSuccesses(ctx context.Context, addr sdk.AccAddress) (uint64, error) {
	p, err := r.k.Participants.Get(ctx, addr)
	if errors.Is(err, collections.ErrNotFound) {
		return 0, nil // it left: its in-flight outcomes start from nothing
	}
	if err != nil {
		return 0, fmt.Errorf("load executor %s: %w", addr, err)
	}
	return p.CurrentEpochStats.InferenceCount, nil
}

func (r *reads) Params(ctx context.Context) (types.Params, error) { return r.k.Params.Get(ctx) }

func (r *reads) Epoch(ctx context.Context) (types.Epoch, error) { return r.k.currentEpoch(ctx) }

// memberOf returns the epoch member at addr, if it is one.
func (k Keeper) memberOf(ctx context.Context, addr sdk.AccAddress) (types.EpochMember, bool, error) {
	r := &reads{k: k}
	i, ok, err := r.MemberIndex(ctx, addr)
	if err != nil || !ok {
		return types.EpochMember{}, false, err
	}
	m, err := r.MemberAt(ctx, i)
	return m, err == nil, err
}
