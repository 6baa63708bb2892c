package types

import (
	"errors"
	"fmt"

	"cosmossdk.io/core/address"

	"github.com/inferenced/inferenced/x/inference/breaker"
	"github.com/inferenced/inferenced/x/inference/evidence"
)

// MaxHealthHeight bounds the heights in a breaker record, so that an
// eligible height (plus a cooldown of at most MaxEpochLength) and its gate
// encoding never overflow.
const MaxHealthHeight int64 = 1 << 60

// validateHealth checks the circuit-breaker part of a genesis: one record
// per executor at most, values the breaker can hold, a probe that is an
// inference of its executor, STARTED or with its outcome queued, and
// pending samples with unique keys below the sequence, each the outcome of
// its inference.
func (gs GenesisState) validateHealth(ac address.Codec, participants map[string]struct{}) error {
	idx := indexInferences(ac, gs)
	seen := make(map[string]struct{}, len(gs.ExecutorHealth))
	for _, h := range gs.ExecutorHealth {
		bz, err := CanonicalAddress(ac, h.Address)
		if err != nil {
			return fmt.Errorf("executor_health address %q: %w", h.Address, err)
		}
		// No participant or inference is required: an executor that left
		// keeps the record its departed in-flight inferences made until the
		// next boundary clears it, also after those inferences are pruned
		// (a prune height is fixed at close, so a longer epoch_length can
		// prune them first).
		if _, dup := seen[string(bz)]; dup {
			return fmt.Errorf("executor_health %s listed twice", h.Address)
		}
		seen[string(bz)] = struct{}{}
		if err := idx.validateRecord(h); err != nil {
			return fmt.Errorf("executor_health %s: %w", h.Address, err)
		}
	}
	keys := make(map[string]struct{}, len(gs.PendingSamples))
	for _, p := range gs.PendingSamples {
		bz, err := CanonicalAddress(ac, p.Executor)
		if err != nil {
			return fmt.Errorf("pending sample executor %q: %w", p.Executor, err)
		}
		if !has(participants, string(bz)) {
			return fmt.Errorf("pending sample executor %s is neither a participant nor an inference executor", p.Executor)
		}
		key := fmt.Sprintf("%x/%d", bz, p.Sequence)
		if _, dup := keys[key]; dup {
			return fmt.Errorf("pending sample %s/%d listed twice", p.Executor, p.Sequence)
		}
		keys[key] = struct{}{}
		if p.Sequence >= gs.SampleSequence {
			return fmt.Errorf("pending sample sequence %d is not below sample_sequence %d", p.Sequence, gs.SampleSequence)
		}
		if err := idx.validatePending(p); err != nil {
			return fmt.Errorf("pending sample %d: %w", p.Sequence, err)
		}
	}
	return nil
}

// inferenceIndex is a genesis's inferences by (agent, id), as the store
// keys them, and which of them have their outcome queued.
type inferenceIndex struct {
	ac     address.Codec
	byKey  map[string]Inference
	queued map[string]struct{}
}

// indexInferences indexes gs's inferences (Validate has checked their
// agents decode) and the inferences its pending samples name (each is
// checked to be that inference's outcome by validatePending).
func indexInferences(ac address.Codec, gs GenesisState) inferenceIndex {
	x := inferenceIndex{ac: ac, byKey: make(map[string]Inference, len(gs.Inferences)), queued: make(map[string]struct{}, len(gs.PendingSamples))}
	for _, inf := range gs.Inferences {
		key, _ := inferenceKey(ac, inf.TransferAgent, inf.InferenceId)
		x.byKey[key] = inf
	}
	for _, p := range gs.PendingSamples {
		if key, err := inferenceKey(ac, p.Sample.Agent, p.Sample.InferenceId); err == nil {
			x.queued[key] = struct{}{}
		}
	}
	return x
}

func (x inferenceIndex) lookup(agent, id string) (Inference, bool) {
	key, err := inferenceKey(x.ac, agent, id)
	if err != nil {
		return Inference{}, false
	}
	inf, ok := x.byKey[key]
	return inf, ok
}

func (x inferenceIndex) outcomeQueued(agent, id string) bool {
	key, err := inferenceKey(x.ac, agent, id)
	if err != nil {
		return false
	}
	_, ok := x.queued[key]
	return ok
}

// validateRecord checks one breaker record: its values, the agents it
// names, and its probe.
func (x inferenceIndex) validateRecord(h ExecutorHealth) error {
	if err := ValidateExecutorHealth(h); err != nil {
		return err
	}
	for _, m := range h.RecentMisses {
		if _, err := CanonicalAddress(x.ac, m.Agent); err != nil {
			return fmt.Errorf("recent miss agent %q: %w", m.Agent, err)
		}
	}
	for _, a := range h.AttestedCredited {
		if _, err := CanonicalAddress(x.ac, a); err != nil {
			return fmt.Errorf("attested_credited agent %q: %w", a, err)
		}
	}
	for _, a := range h.ScopedAgents {
		if _, err := CanonicalAddress(x.ac, a); err != nil {
			return fmt.Errorf("scoped agent %q: %w", a, err)
		}
	}
	if h.ProbeInferenceId == "" {
		return nil
	}
	if _, err := CanonicalAddress(x.ac, h.ProbeAgent); err != nil {
		return fmt.Errorf("probe_agent %q: %w", h.ProbeAgent, err)
	}
	probe, ok := x.lookup(h.ProbeAgent, h.ProbeInferenceId)
	// A probe that finished or expired in the exported block holds the
	// slot until the next block's step applies its queued outcome, which
	// always clears it (the live chain's state between the two). A closed
	// probe with nothing queued would hold the slot until the epoch ends;
	// so would one started before its record's last state change (ignored
	// as stale).
	live := probe.Status == INFERENCE_STATUS_STARTED || x.outcomeQueued(h.ProbeAgent, h.ProbeInferenceId)
	if !ok || !live || probe.Executor != h.Address || probe.StartHeight < h.SinceHeight {
		return fmt.Errorf("probe %q of transfer agent %s is not a STARTED inference of this executor since its PROBE began, nor a closed one whose outcome is queued",
			h.ProbeInferenceId, h.ProbeAgent)
	}
	return nil
}

// validatePending checks that a pending sample is the outcome of a closed
// inference of its executor: anything else would count an outcome twice or
// invent one.
func (x inferenceIndex) validatePending(p PendingSampleEntry) error {
	if err := ValidateInferenceID(p.Sample.InferenceId); err != nil {
		return err
	}
	if p.Sample.PriorOks > breaker.MaxWindow {
		return fmt.Errorf("prior_oks %d exceeds %d", p.Sample.PriorOks, breaker.MaxWindow)
	}
	inf, ok := x.lookup(p.Sample.Agent, p.Sample.InferenceId)
	wantStatus := INFERENCE_STATUS_FINISHED
	if p.Sample.Miss {
		wantStatus = INFERENCE_STATUS_EXPIRED
	}
	if !ok || inf.Executor != p.Executor || inf.Status != wantStatus || inf.StartHeight != p.Sample.StartHeight ||
		inf.TransferAgent != p.Sample.Agent || inf.EndHeight != p.Sample.EndHeight {
		return fmt.Errorf("not the outcome of inference %q of %s", p.Sample.InferenceId, p.Executor)
	}
	return nil
}

// validateScope checks a record's scope: at most a window of distinct,
// canonical agent addresses, a height in range, and agents only with a
// scoped trip on record.
func validateScope(h ExecutorHealth) error {
	if h.ScopedUntil < 0 || h.ScopedUntil > MaxHealthHeight || h.ServiceOkAt < 0 || h.ServiceOkAt > MaxHealthHeight {
		return fmt.Errorf("scoped_until and service_ok_at must be in [0, %d]", MaxHealthHeight)
	}
	if len(h.ScopedAgents) > breaker.MaxWindow {
		return fmt.Errorf("%d scoped agents, at most %d", len(h.ScopedAgents), breaker.MaxWindow)
	}
	if len(h.ScopedAgents) > 0 && h.Scopes == 0 {
		return errors.New("scoped agents without a scoped trip on record")
	}
	seen := make(map[string]struct{}, len(h.ScopedAgents))
	for _, a := range h.ScopedAgents {
		if _, dup := seen[a]; dup {
			return fmt.Errorf("scoped agent %s listed twice", a)
		}
		seen[a] = struct{}{}
	}
	return nil
}

// ValidateExecutorHealth checks that a breaker record holds values the
// breaker can produce.
func ValidateExecutorHealth(h ExecutorHealth) error {
	if _, ok := HealthState_name[int32(h.State)]; !ok {
		return fmt.Errorf("unknown state %d", h.State)
	}
	if _, ok := SampleKind_name[int32(h.Evidence)]; !ok {
		return fmt.Errorf("unknown evidence kind %d", h.Evidence)
	}
	if _, ok := HealthReason_name[int32(h.Reason)]; !ok {
		return fmt.Errorf("unknown reason %d", h.Reason)
	}
	if h.Traffic.Count > breaker.MaxWindow || h.Attested.Count > breaker.MaxWindow || h.Service.Count > breaker.MaxWindow {
		return fmt.Errorf("a window holds more than %d samples", breaker.MaxWindow)
	}
	if h.State != HEALTH_STATE_HEALTHY && (h.CooldownBlocks < 1 || h.Exclusions < 1) {
		return fmt.Errorf("%s needs a cooldown and an exclusion on record", h.State)
	}
	if h.ExcludedAt < 0 || h.SinceHeight < 0 || h.ExcludedAt > MaxHealthHeight || h.SinceHeight > MaxHealthHeight ||
		h.CooldownBlocks > MaxEpochLength {
		return fmt.Errorf("heights must be in [0, %d] and the cooldown at most %d", MaxHealthHeight, MaxEpochLength)
	}
	if err := validateLedger(h); err != nil {
		return err
	}
	if err := validateScope(h); err != nil {
		return err
	}
	if h.ProbeInferenceId != "" {
		if h.State != HEALTH_STATE_PROBE {
			return fmt.Errorf("probe_inference_id set on a %s record", h.State)
		}
		if h.Evidence == SAMPLE_KIND_SERVICE {
			return errors.New("probe_inference_id set on a record excluded on service, whose probe the canaries decide")
		}
		if err := ValidateInferenceID(h.ProbeInferenceId); err != nil {
			return fmt.Errorf("probe_inference_id: %w", err)
		}
	}
	if (h.ProbeAgent == "") != (h.ProbeInferenceId == "") {
		return fmt.Errorf("probe_agent and probe_inference_id name the probe together: set both or neither")
	}
	return nil
}

// validateLedger checks a record's evidence ledger: at most a window of
// misses, numbered below the outcome counter in increasing order, with
// heights the ledger can hold.
func validateLedger(h ExecutorHealth) error {
	if len(h.RecentMisses) > breaker.MaxWindow {
		return fmt.Errorf("recent_misses holds %d misses, more than %d", len(h.RecentMisses), breaker.MaxWindow)
	}
	if h.AttestedMissAt < 0 || h.AttestedMissAt > MaxHealthHeight {
		return fmt.Errorf("attested_miss_at must be in [0, %d]", MaxHealthHeight)
	}
	if len(h.AttestedCredited) > evidence.MaxCredited || (h.AttestedMissAt == 0 && len(h.AttestedCredited) > 0) {
		return fmt.Errorf("attested_credited holds %d agents: at most %d, and none without attested_miss_at", len(h.AttestedCredited), evidence.MaxCredited)
	}
	for i, m := range h.RecentMisses {
		switch {
		case m.Outcome >= h.TrafficOutcomes:
			return fmt.Errorf("recent miss %d: outcome %d is not below traffic_outcomes %d", i, m.Outcome, h.TrafficOutcomes)
		case i > 0 && m.Outcome <= h.RecentMisses[i-1].Outcome:
			return fmt.Errorf("recent miss %d: outcomes must increase", i)
		case h.TrafficOutcomes-m.Outcome > breaker.MaxWindow:
			return fmt.Errorf("recent miss %d: outcome %d is older than any window", i, m.Outcome)
		case m.StartHeight < 0 || m.StartHeight > m.EndHeight || m.EndHeight > MaxHealthHeight:
			return fmt.Errorf("recent miss %d: heights must satisfy 0 <= start <= end <= %d", i, MaxHealthHeight)
		}
	}
	return nil
}
