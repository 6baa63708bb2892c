// Package health is the circuit breaker's store: it owns every collection
// the breaker keeps (records, the cooldown index, the gates, the record
// count and the traffic-sample queue) and is their only writer. The pure
// state machine is x/inference/breaker; what the breaker reads of the rest
// of the module (the epoch group, model weights, counted successes, params)
// comes through the Module interface, which the keeper implements.
package health

import (
	"context"
	"errors"
	"fmt"

	"cosmossdk.io/collections"
	"cosmossdk.io/core/address"

	"github.com/cosmos/cosmos-sdk/codec"
	sdk "github.com/cosmos/cosmos-sdk/types"

	"github.com/inferenced/inferenced/x/inference/breaker"
	"github.com/inferenced/inferenced/x/inference/evidence"
	"github.com/inferenced/inferenced/x/inference/judge"
	"github.com/inferenced/inferenced/x/inference/types"
)

// Module is what the breaker reads from the rest of x/inference.
type Module interface {
	// Member returns the current epoch member at addr, if it is one.
	Member(ctx context.Context, addr sdk.AccAddress) (types.EpochMember, bool, error)
	// ModelWeight is a model's total epoch weight (0 if nobody serves it).
	ModelWeight(ctx context.Context, model string) (uint64, error)
	// PriorSuccesses is how many inferences the executor finished this
	// epoch, up to a full window: the history of an executor the breaker
	// holds nothing on.
	PriorSuccesses(ctx context.Context, addr sdk.AccAddress) (uint32, error)
	// LoadParams returns the module's params.
	LoadParams(ctx context.Context) (types.Params, error)
	// MissCounted is told of a traffic miss through agent that counts
	// against executor: the SPRT counts it, and the agent's standing
	// records it. A miss no attestation backed stays charged to its agent
	// (charged now if it was not held); one an attestation backed is not
	// (refunded if it was held).
	MissCounted(ctx context.Context, executor sdk.AccAddress, agent string, wasHeld, byAttestation bool) error
	// MissHeld is told of a traffic miss that nothing corroborates (yet):
	// it is charged to its agent.
	MissHeld(ctx context.Context, agent string) error
	// MissExcused is told of a miss an attestation covers but that does not
	// count (that attestation already counted one of the agent's): its
	// agent is not charged for it (refunded when it had been held).
	MissExcused(ctx context.Context, agent string, wasHeld bool) error
}

// Store is the breaker's state. Its collections are unexported: every
// change goes through this package, which keeps the derived indexes in
// step with the records in one place (save).
type Store struct {
	ac     address.Codec
	module Module

	// records holds the breaker record of every executor that is not
	// plainly healthy this epoch; the others have none.
	records collections.Map[sdk.AccAddress, types.ExecutorHealth]
	// recordCount is the size of records (absent when 0), so that a block
	// in which the breaker holds no one learns it from one read instead of
	// opening an iterator.
	recordCount collections.Item[uint64]
	// cooldowns holds (eligible height, executor) of exactly the EXCLUDED
	// records, so each block promotes exactly the due ones.
	cooldowns collections.KeySet[collections.Pair[int64, sdk.AccAddress]]
	// gates holds, by bech32 address, the gate of exactly the EXCLUDED and
	// PROBE records (gate.go): selection reads a few small integers
	// instead of whole records.
	gates collections.Map[string, uint64]
	// pending holds the traffic outcomes of the current block by
	// (executor, sequence); the next block's step applies and removes them.
	pending  collections.Map[collections.Pair[sdk.AccAddress, uint64], types.PendingSample]
	sequence collections.Sequence
	// queued is present exactly while pending holds anything, so a block
	// with nothing queued opens no iterator.
	queued collections.Item[bool]
}

// NewStore declares the breaker's collections in the module's schema.
func NewStore(sb *collections.SchemaBuilder, cdc codec.BinaryCodec, ac address.Codec, module Module) Store {
	return Store{
		ac:          ac,
		module:      module,
		records:     collections.NewMap(sb, types.ExecutorHealthPrefix, "executor_health", sdk.AccAddressKey, codec.CollValue[types.ExecutorHealth](cdc)),
		recordCount: collections.NewItem(sb, types.HealthRecordCountKey, "health_record_count", collections.Uint64Value),
		cooldowns:   collections.NewKeySet(sb, types.CooldownIndexPrefix, "cooldown_index", collections.PairKeyCodec(collections.Int64Key, sdk.AccAddressKey)),
		gates:       collections.NewMap(sb, types.HealthGatePrefix, "health_gate", collections.StringKey, collections.Uint64Value),
		pending:     collections.NewMap(sb, types.PendingSamplesPrefix, "pending_samples", collections.PairKeyCodec(sdk.AccAddressKey, collections.Uint64Key), codec.CollValue[types.PendingSample](cdc)),
		sequence:    collections.NewSequence(sb, types.SampleSequenceKey, "sample_sequence"),
		queued:      collections.NewItem(sb, types.SamplesQueuedKey, "samples_queued", collections.BoolValue),
	}
}

// entry is an executor's breaker record as the store handles it: the pure
// record, its evidence ledger, and what only the store knows (the probe's
// inference, named by its transfer agent and id).
type entry struct {
	addr   sdk.AccAddress
	stored bool // a record exists in the store
	rec    breaker.Record
	ledger evidence.Ledger
	probe  probeRef
}

// probeRef names a probe inference: ids are unique per transfer agent, so
// the id alone would let another agent's inference of the same id on the
// same executor pass for the probe.
type probeRef struct {
	agent, id string
}

// is reports whether the outcome of agent's inference id is this probe's.
func (p probeRef) is(agent, id string) bool { return p.id != "" && p.agent == agent && p.id == id }

// fresh is the entry of an executor without a record as a new record
// starts it (judge.Fresh).
func (e entry) fresh(priorOks uint32) entry {
	x := judge.Fresh(priorOks)
	e.rec, e.ledger = x.Record, x.Ledger
	return e
}

// plain reports whether the entry carries nothing a fresh healthy executor
// would not: it then needs no record.
func (e entry) plain() bool { return e.rec.Plain() && e.ledger.Empty() }

// same reports whether two entries would store the same record.
func (e entry) same(o entry) bool {
	return e.rec == o.rec && e.probe == o.probe && e.ledger.Equal(o.ledger)
}

func probeOf(h types.ExecutorHealth) probeRef {
	return probeRef{agent: h.ProbeAgent, id: h.ProbeInferenceId}
}

func toLedger(h types.ExecutorHealth) evidence.Ledger {
	l := evidence.Ledger{Outcomes: h.TrafficOutcomes, AttestedMissAt: h.AttestedMissAt, AttestedCredited: h.AttestedCredited}
	for _, m := range h.RecentMisses {
		l.Misses = append(l.Misses, evidence.Miss{
			Agent: m.Agent, Outcome: m.Outcome, Start: m.StartHeight, End: m.EndHeight, Counted: m.Counted, Probe: m.Probe,
		})
	}
	return l
}

func fromLedger(l evidence.Ledger) []types.TrafficMiss {
	var out []types.TrafficMiss
	for _, m := range l.Misses {
		out = append(out, types.TrafficMiss{
			Agent: m.Agent, Outcome: m.Outcome, StartHeight: m.Start, EndHeight: m.End, Counted: m.Counted, Probe: m.Probe,
		})
	}
	return out
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

func (e entry) proto(ac address.Codec) (types.ExecutorHealth, error) {
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
		ProbeInferenceId: e.probe.id,
		ProbeAgent:       e.probe.agent,
		RecentMisses:     fromLedger(e.ledger),
		TrafficOutcomes:  e.ledger.Outcomes,
		AttestedMissAt:   e.ledger.AttestedMissAt,
		AttestedCredited: e.ledger.AttestedCredited,
	}, nil
}

// load returns an executor's entry; an executor without a record is
// HEALTHY with no recent misses.
func (s Store) load(ctx context.Context, addr sdk.AccAddress) (entry, error) {
	h, err := s.records.Get(ctx, addr)
	if errors.Is(err, collections.ErrNotFound) {
		return entry{addr: addr}, nil
	}
	if err != nil {
		return entry{}, fmt.Errorf("load breaker record of %s: %w", addr, err)
	}
	return entry{addr: addr, stored: true, rec: toBreaker(h), ledger: toLedger(h), probe: probeOf(h)}, nil
}

// save is the one writer of records and everything derived from them: it
// writes an entry that changed from before, keeps the cooldown index, the
// gate and the record count in step, and deletes a record that has become
// plain (a fresh executor needs none).
func (s Store) save(ctx context.Context, before, after entry) error {
	if !after.rec.ProbeInFlight {
		after.probe = probeRef{}
	}
	if before.stored && before.same(after) {
		return nil
	}
	if before.stored && before.rec.State == breaker.Excluded {
		if err := s.cooldowns.Remove(ctx, collections.Join(before.rec.EligibleAt(), before.addr)); err != nil {
			return fmt.Errorf("unindex cooldown of %s: %w", before.addr, err)
		}
	}
	if after.plain() && !before.stored {
		return nil
	}
	h, err := after.proto(s.ac)
	if err != nil {
		return err
	}
	if err := s.syncGate(ctx, h.Address, before, after); err != nil {
		return err
	}
	if after.plain() {
		if err := s.records.Remove(ctx, after.addr); err != nil {
			return fmt.Errorf("drop breaker record of %s: %w", after.addr, err)
		}
		return s.countRecords(ctx, -1)
	}
	if after.rec.State == breaker.Excluded {
		if err := s.cooldowns.Set(ctx, collections.Join(after.rec.EligibleAt(), after.addr)); err != nil {
			return fmt.Errorf("index cooldown of %s: %w", after.addr, err)
		}
	}
	if err := s.records.Set(ctx, after.addr, h); err != nil {
		return fmt.Errorf("store breaker record of %s: %w", after.addr, err)
	}
	if !before.stored {
		return s.countRecords(ctx, +1)
	}
	return nil
}

// syncGate keeps the gate of address in step with a record change.
func (s Store) syncGate(ctx context.Context, address string, before, after entry) error {
	was, hadGate := gateOf(before.rec)
	hadGate = hadGate && before.stored
	now, hasGate := gateOf(after.rec)
	switch {
	case hasGate && (!hadGate || now != was):
		if err := s.gates.Set(ctx, address, uint64(now)); err != nil {
			return fmt.Errorf("store health gate: %w", err)
		}
	case !hasGate && hadGate:
		if err := s.gates.Remove(ctx, address); err != nil {
			return fmt.Errorf("drop health gate: %w", err)
		}
	}
	return nil
}

// heldCount is the number of breaker records, read without an iterator.
func (s Store) heldCount(ctx context.Context) (uint64, error) {
	n, err := s.recordCount.Get(ctx)
	if errors.Is(err, collections.ErrNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("load breaker record count: %w", err)
	}
	return n, nil
}

// countRecords keeps recordCount equal to the number of records after one
// is added (+1) or removed (-1).
func (s Store) countRecords(ctx context.Context, delta int) error {
	n, err := s.heldCount(ctx)
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
		if err := s.recordCount.Remove(ctx); err != nil {
			return fmt.Errorf("drop breaker record count: %w", err)
		}
		return nil
	}
	if err := s.recordCount.Set(ctx, n); err != nil {
		return fmt.Errorf("store breaker record count: %w", err)
	}
	return nil
}
