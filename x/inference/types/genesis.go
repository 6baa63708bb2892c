package types

import (
	"bytes"
	"fmt"

	"cosmossdk.io/core/address"
)

// DefaultGenesis is the genesis of a new chain: default params, health
// bundles in the HEALTH3 layout from the first block, nothing else.
func DefaultGenesis() *GenesisState {
	return &GenesisState{Params: DefaultParams(), BundleV3Height: 1}
}

// Validate checks the genesis without touching state: params, unique and
// well-formed participants, inferences and transfer agents, a group
// consistent with the epoch.
func (gs GenesisState) Validate(ac address.Codec) error {
	if err := gs.Params.Validate(); err != nil {
		return fmt.Errorf("params: %w", err)
	}
	if uint64(len(gs.Participants)) > gs.Params.MaxParticipants {
		return fmt.Errorf("%d participants exceed max_participants %d", len(gs.Participants), gs.Params.MaxParticipants)
	}
	// Keyed by address bytes: bech32 also decodes an upper-case spelling.
	seen := make(map[string]struct{}, len(gs.Participants))
	var current uint64
	if gs.Epoch != nil {
		current = gs.Epoch.Index
	}
	for i, p := range gs.Participants {
		if err := ValidateParticipant(ac, p); err != nil {
			return fmt.Errorf("participant %d: %w", i, err)
		}
		if err := validateParticipantBond(p, gs.Params, current); err != nil {
			return fmt.Errorf("participant %s: %w", p.Address, err)
		}
		bz, _ := ac.StringToBytes(p.Address) // checked by ValidateParticipant
		if _, dup := seen[string(bz)]; dup {
			return fmt.Errorf("participant %s listed twice", p.Address)
		}
		seen[string(bz)] = struct{}{}
	}
	if gs.EpochGroup != nil {
		if gs.Epoch == nil || gs.EpochGroup.EpochIndex != gs.Epoch.Index {
			return fmt.Errorf("epoch_group needs an epoch with the same index")
		}
		if err := validateGroup(ac, *gs.EpochGroup, seen); err != nil {
			return fmt.Errorf("epoch_group: %w", err)
		}
	}
	if gs.Epoch != nil && (gs.Epoch.Index == 0 || gs.Epoch.StartHeight < 0) {
		return fmt.Errorf("epoch index must be >= 1 and start_height >= 0")
	}
	if gs.Epoch != nil {
		group := 0
		if gs.EpochGroup != nil {
			group = len(gs.EpochGroup.Members)
		}
		if int(gs.Epoch.Members) != group {
			return fmt.Errorf("epoch members is %d but the epoch group has %d", gs.Epoch.Members, group)
		}
	}
	ids := make(map[string]struct{}, len(gs.Inferences))
	for _, inf := range gs.Inferences {
		if err := validateInference(ac, inf); err != nil {
			return fmt.Errorf("inference %q: %w", inf.InferenceId, err)
		}
		// The executor need not be a participant: one that left keeps its
		// inferences, and finish and expiry of a departed executor's
		// in-flight ones count no stats (keeper countOutcome).
		// Ids are unique per transfer agent: two agents may share one.
		key, err := inferenceKey(ac, inf.TransferAgent, inf.InferenceId)
		if err != nil {
			return fmt.Errorf("inference %q: %w", inf.InferenceId, err)
		}
		if _, dup := ids[key]; dup {
			return fmt.Errorf("inference %q of transfer agent %s listed twice", inf.InferenceId, inf.TransferAgent)
		}
		ids[key] = struct{}{}
	}
	if err := gs.validatePruneHeights(ac); err != nil {
		return err
	}
	if gs.InferencesPrunedThrough < 0 || gs.InferencesPrunedThrough > MaxHealthHeight {
		return fmt.Errorf("inferences_pruned_through must be in [0, %d], got %d", MaxHealthHeight, gs.InferencesPrunedThrough)
	}
	if gs.BundleV3Height < 0 || gs.BundleV3Height > MaxHealthHeight {
		return fmt.Errorf("bundle_v3_height must be in [0, %d], got %d", MaxHealthHeight, gs.BundleV3Height)
	}
	if err := gs.validateAgents(ac); err != nil {
		return err
	}
	return gs.validateHealth(ac, gs.healthSubjects(ac))
}

// healthSubjects are the executors the breaker may hold state on: the
// participants, and the executors of the genesis inferences (one that left
// can still have outcomes queued or judged until the next boundary).
func (gs GenesisState) healthSubjects(ac address.Codec) map[string]struct{} {
	subjects := make(map[string]struct{}, len(gs.Participants))
	add := func(addr string) {
		if bz, err := ac.StringToBytes(addr); err == nil {
			subjects[string(bz)] = struct{}{}
		}
	}
	for _, p := range gs.Participants {
		add(p.Address)
	}
	for _, inf := range gs.Inferences {
		add(inf.Executor)
	}
	return subjects
}

// validateParticipantBond checks a participant's bond and leaving epoch:
// weight within the bond (CheckBackedWeight), and a leaving epoch that is 0
// (serving) or the current epoch, as the boundary that starts the next one
// releases it. The minimum bond is not checked: governance may have raised
// it since the participant registered.
func validateParticipantBond(p Participant, params Params, current uint64) error {
	if err := CheckBackedWeight(p.Weight, p.Bond, params); err != nil {
		return err
	}
	if p.LeavingEpoch != 0 && p.LeavingEpoch != current {
		return fmt.Errorf("leaving_epoch %d must be 0 (serving) or the current epoch %d: it is released when the next epoch starts",
			p.LeavingEpoch, current)
	}
	return nil
}

// ValidateParticipant checks a stored participant record.
func ValidateParticipant(ac address.Codec, p Participant) error {
	if _, err := CanonicalAddress(ac, p.Address); err != nil {
		return fmt.Errorf("address %q: %w", p.Address, err)
	}
	if err := ValidateInferenceURL(p.InferenceUrl); err != nil {
		return err
	}
	if err := validateSortedModels(p.Models); err != nil {
		return err
	}
	if err := ValidateWeight(p.Weight); err != nil {
		return err
	}
	if _, ok := ParticipantStatus_name[int32(p.Status)]; !ok || p.Status == PARTICIPANT_STATUS_UNSPECIFIED {
		return fmt.Errorf("status %d is not a participant status", p.Status)
	}
	return nil
}

// validateSortedModels checks a stored model list: valid, unique and sorted,
// as selection binary-searches it.
func validateSortedModels(models []string) error {
	sorted, err := NormalizeModels(models)
	if err != nil {
		return err
	}
	for i := range sorted {
		if sorted[i] != models[i] {
			return fmt.Errorf("models must be sorted")
		}
	}
	return nil
}

func has(set map[string]struct{}, k string) bool {
	_, ok := set[k]
	return ok
}

func validateGroup(ac address.Codec, g EpochGroup, participants map[string]struct{}) error {
	var prev []byte
	for i, m := range g.Members {
		bz, err := CanonicalAddress(ac, m.Address)
		if err != nil {
			return fmt.Errorf("member %d address: %w", i, err)
		}
		if prev != nil && bytes.Compare(prev, bz) >= 0 {
			return fmt.Errorf("members must be sorted by address bytes and unique (at %d)", i)
		}
		prev = bz
		if !has(participants, string(bz)) {
			return fmt.Errorf("member %d (%s) is not a participant", i, m.Address)
		}
		if err := validateSortedModels(m.Models); err != nil {
			return fmt.Errorf("member %d: %w", i, err)
		}
		if err := ValidateWeight(m.Weight); err != nil {
			return fmt.Errorf("member %d: %w", i, err)
		}
	}
	return nil
}

func validateInference(ac address.Codec, inf Inference) error {
	if err := ValidateInferenceID(inf.InferenceId); err != nil {
		return err
	}
	if err := ValidateModel(inf.Model); err != nil {
		return err
	}
	for _, a := range []string{inf.TransferAgent, inf.Executor} {
		if _, err := CanonicalAddress(ac, a); err != nil {
			return fmt.Errorf("address %q: %w", a, err)
		}
	}
	switch inf.Status {
	case INFERENCE_STATUS_STARTED, INFERENCE_STATUS_FINISHED, INFERENCE_STATUS_EXPIRED:
	default:
		return fmt.Errorf("status %d is not an inference status", inf.Status)
	}
	if inf.ExpirationHeight <= inf.StartHeight {
		return fmt.Errorf("expiration_height must be after start_height")
	}
	if inf.StartHeight < 0 || inf.ExpirationHeight > MaxHealthHeight {
		return fmt.Errorf("heights must be in [0, %d]", MaxHealthHeight)
	}
	// A closed inference's prune height is end_height + retention: it
	// closed at or after its start, at a height far from overflow.
	if inf.Status != INFERENCE_STATUS_STARTED && (inf.EndHeight < inf.StartHeight || inf.EndHeight > MaxHealthHeight) {
		return fmt.Errorf("a %s inference needs end_height in [start_height, %d], got %d", inf.Status, MaxHealthHeight, inf.EndHeight)
	}
	return nil
}

// inferenceKey is an inference's identity in a genesis: its transfer
// agent's address bytes and its id, as the store keys it.
func inferenceKey(ac address.Codec, agent, id string) (string, error) {
	bz, err := ac.StringToBytes(agent)
	if err != nil {
		return "", fmt.Errorf("transfer agent %q: %w", agent, err)
	}
	return fmt.Sprintf("%x/%s", bz, id), nil
}
