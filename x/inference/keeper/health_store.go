package keeper

import (
	"context"
	"errors"
	"fmt"

	"cosmossdk.io/collections"

	sdk "github.com/cosmos/cosmos-sdk/types"

	"github.com/inferenced/inferenced/x/inference/breaker"
	"github.com/inferenced/inferenced/x/inference/types"
)

// healthEntry is an executor's breaker record as the keeper handles it: the
// pure record plus what only the keeper knows (the probe's inference id).
type healthEntry struct {
	addr    sdk.AccAddress
	stored  bool // a record exists in the store
	rec     breaker.Record
	probeID string
}

func toBreaker(h types.ExecutorHealth) breaker.Record {
	var r breaker.Record
	r.State = breaker.State(h.State)
	r.Windows[breaker.Traffic] = breaker.Window{Bits: h.Traffic.Bits, Count: h.Traffic.Count}
	r.Windows[breaker.Attested] = breaker.Window{Bits: h.Attested.Bits, Count: h.Attested.Count}
	r.Evidence = breaker.Kind(h.Evidence)
	r.Reason = breaker.Reason(h.Reason)
	r.Since = h.SinceHeight
	r.ExcludedAt = h.ExcludedAt
	r.Cooldown = h.CooldownBlocks
	r.Exclusions = h.Exclusions
	r.CapRefusals = h.CapRefusals
	r.ProbeInFlight = h.ProbeInferenceId != ""
	return r
}

func (e healthEntry) proto(ac interface {
	BytesToString([]byte) (string, error)
}) (types.ExecutorHealth, error) {
	address, err := ac.BytesToString(e.addr)
	if err != nil {
		return types.ExecutorHealth{}, fmt.Errorf("encode executor: %w", err)
	}
	r := e.rec
	t, a := r.Windows[breaker.Traffic], r.Windows[breaker.Attested]
	return types.ExecutorHealth{
		Address:          address,
		State:            types.HealthState(r.State),
		Traffic:          types.SampleWindow{Bits: t.Bits, Count: t.Count},
		Attested:         types.SampleWindow{Bits: a.Bits, Count: a.Count},
		Evidence:         types.SampleKind(r.Evidence),
		Reason:           types.HealthReason(r.Reason),
		SinceHeight:      r.Since,
		ExcludedAt:       r.ExcludedAt,
		CooldownBlocks:   r.Cooldown,
		Exclusions:       r.Exclusions,
		CapRefusals:      r.CapRefusals,
		ProbeInferenceId: e.probeID,
	}, nil
}

// loadHealth returns an executor's breaker entry; an executor without a
// record is HEALTHY with no recent misses.
func (k Keeper) loadHealth(ctx context.Context, addr sdk.AccAddress) (healthEntry, error) {
	h, err := k.ExecutorHealth.Get(ctx, addr)
	if errors.Is(err, collections.ErrNotFound) {
		return healthEntry{addr: addr}, nil
	}
	if err != nil {
		return healthEntry{}, fmt.Errorf("load breaker record of %s: %w", addr, err)
	}
	return healthEntry{addr: addr, stored: true, rec: toBreaker(h), probeID: h.ProbeInferenceId}, nil
}

// saveHealth writes an entry that changed from before, keeps the cooldown
// index and the gate in step, and deletes a record that has become plain.
func (k Keeper) saveHealth(ctx context.Context, before, after healthEntry) error {
	if !after.rec.ProbeInFlight {
		after.probeID = ""
	}
	if before.stored && before.rec == after.rec && before.probeID == after.probeID {
		return nil
	}
	if before.stored && before.rec.State == breaker.Excluded {
		if err := k.CooldownIndex.Remove(ctx, collections.Join(before.rec.EligibleAt(), before.addr)); err != nil {
			return fmt.Errorf("unindex cooldown of %s: %w", before.addr, err)
		}
	}
	if after.rec.Plain() && !before.stored {
		return nil
	}
	h, err := after.proto(k.addressCodec)
	if err != nil {
		return err
	}
	if err := k.syncGate(ctx, h.Address, before, after); err != nil {
		return err
	}
	if after.rec.Plain() {
		if err := k.ExecutorHealth.Remove(ctx, after.addr); err != nil {
			return fmt.Errorf("drop breaker record of %s: %w", after.addr, err)
		}
		return k.countHealthRecords(ctx, -1)
	}
	if after.rec.State == breaker.Excluded {
		if err := k.CooldownIndex.Set(ctx, collections.Join(after.rec.EligibleAt(), after.addr)); err != nil {
			return fmt.Errorf("index cooldown of %s: %w", after.addr, err)
		}
	}
	if err := k.ExecutorHealth.Set(ctx, after.addr, h); err != nil {
		return fmt.Errorf("store breaker record of %s: %w", after.addr, err)
	}
	if !before.stored {
		return k.countHealthRecords(ctx, +1)
	}
	return nil
}

// healthRecords is the number of breaker records, read without an iterator.
func (k Keeper) healthRecords(ctx context.Context) (uint64, error) {
	n, err := k.HealthRecordCount.Get(ctx)
	if errors.Is(err, collections.ErrNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("load breaker record count: %w", err)
	}
	return n, nil
}

// countHealthRecords keeps HealthRecordCount equal to the number of
// breaker records after one is added (+1) or removed (-1).
func (k Keeper) countHealthRecords(ctx context.Context, delta int) error {
	n, err := k.healthRecords(ctx)
	if err != nil {
		return err
	}
	switch {
	case delta < 0 && n == 0:
		return errors.New("breaker record count would go below zero")
	case delta < 0:
		n--
	default:
		n++
	}
	if n == 0 {
		if err := k.HealthRecordCount.Remove(ctx); err != nil {
			return fmt.Errorf("drop breaker record count: %w", err)
		}
		return nil
	}
	if err := k.HealthRecordCount.Set(ctx, n); err != nil {
		return fmt.Errorf("store breaker record count: %w", err)
	}
	return nil
}

// queueTrafficSample holds an inference outcome for the next block's
// breaker step. A success of an executor the breaker holds nothing on, and
// has nothing pending for, would change nothing and is not written: a
// network where everyone is healthy writes no breaker state.
func (k Keeper) queueTrafficSample(ctx context.Context, inf types.Inference, miss bool) error {
	executor, err := k.addressCodec.StringToBytes(inf.Executor)
	if err != nil {
		return fmt.Errorf("inference executor %q: %w", inf.Executor, err)
	}
	addr := sdk.AccAddress(executor)
	stored, err := k.ExecutorHealth.Has(ctx, addr)
	if err != nil {
		return fmt.Errorf("look up breaker record: %w", err)
	}
	sample := types.PendingSample{InferenceId: inf.InferenceId, Miss: miss, StartHeight: inf.StartHeight}
	if !stored {
		pending, err := k.hasPendingSamples(ctx, addr)
		if err != nil {
			return err
		}
		if !pending {
			if !miss {
				return nil
			}
			// The first miss starts a record; its window begins with the
			// successes this epoch already counted, up to a full window.
			if sample.PriorOks, err = k.countedSuccesses(ctx, addr); err != nil {
				return err
			}
		}
	}
	seq, err := k.SampleSequence.Next(ctx)
	if err != nil {
		return fmt.Errorf("next sample sequence: %w", err)
	}
	if err := k.PendingSamples.Set(ctx, collections.Join(addr, seq), sample); err != nil {
		return fmt.Errorf("queue sample: %w", err)
	}
	return k.markSamplesQueued(ctx)
}

// markSamplesQueued records that PendingSamples holds something (one read
// when it already says so).
func (k Keeper) markSamplesQueued(ctx context.Context) error {
	queued, err := k.SamplesQueued.Has(ctx)
	if err != nil {
		return fmt.Errorf("look up queued-samples mark: %w", err)
	}
	if queued {
		return nil
	}
	if err := k.SamplesQueued.Set(ctx, true); err != nil {
		return fmt.Errorf("mark samples queued: %w", err)
	}
	return nil
}

// countedSuccesses is how many successes the executor's epoch stats hold, up
// to a full window: the history of an executor the breaker holds nothing on.
func (k Keeper) countedSuccesses(ctx context.Context, addr sdk.AccAddress) (uint32, error) {
	p, err := k.Participants.Get(ctx, addr)
	if err != nil {
		return 0, fmt.Errorf("load executor %s: %w", addr, err)
	}
	return uint32(min(p.CurrentEpochStats.InferenceCount, breaker.MaxWindow)), nil
}

func (k Keeper) hasPendingSamples(ctx context.Context, addr sdk.AccAddress) (bool, error) {
	it, err := k.PendingSamples.Iterate(ctx, collections.NewPrefixedPairRange[sdk.AccAddress, uint64](addr))
	if err != nil {
		return false, fmt.Errorf("iterate pending samples: %w", err)
	}
	defer it.Close()
	return it.Valid(), nil
}

// claimProbe gives a just-started inference the probe slot of a PROBE
// executor whose slot is free: its outcome alone decides the probe.
func (k Keeper) claimProbe(ctx context.Context, executor sdk.AccAddress, inferenceID string) error {
	before, err := k.loadHealth(ctx, executor)
	if err != nil {
		return err
	}
	rec, claimed := breaker.ClaimProbe(before.rec)
	if !claimed {
		return nil
	}
	after := before
	after.rec, after.probeID = rec, inferenceID
	if err := k.saveHealth(ctx, before, after); err != nil {
		return err
	}
	sdkCtx := sdk.UnwrapSDKContext(ctx)
	address, err := k.addressCodec.BytesToString(executor)
	if err != nil {
		return fmt.Errorf("encode executor: %w", err)
	}
	return sdkCtx.EventManager().EmitTypedEvent(&types.EventProbeStarted{
		Executor: address, InferenceId: inferenceID, Height: sdkCtx.BlockHeight(),
	})
}

// clearHealth drops all breaker state; the epoch boundary calls it.
func (k Keeper) clearHealth(ctx context.Context) error {
	if err := k.ExecutorHealth.Clear(ctx, nil); err != nil {
		return fmt.Errorf("clear breaker records: %w", err)
	}
	if err := k.HealthRecordCount.Remove(ctx); err != nil {
		return fmt.Errorf("clear breaker record count: %w", err)
	}
	if err := k.CooldownIndex.Clear(ctx, nil); err != nil {
		return fmt.Errorf("clear cooldown index: %w", err)
	}
	if err := k.PendingSamples.Clear(ctx, nil); err != nil {
		return fmt.Errorf("clear pending samples: %w", err)
	}
	if err := k.SamplesQueued.Remove(ctx); err != nil {
		return fmt.Errorf("clear queued-samples mark: %w", err)
	}
	if err := k.HealthGate.Clear(ctx, nil); err != nil {
		return fmt.Errorf("clear health gates: %w", err)
	}
	resetHealthGauges()
	return nil
}
