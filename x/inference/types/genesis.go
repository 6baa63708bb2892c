package types

import (
	"bytes"
	"fmt"

	"cosmossdk.io/core/address"
)

// DefaultGenesis is the genesis of a new chain: default params, nothing else.
func DefaultGenesis() *GenesisState {
	return &GenesisState{Params: DefaultParams()}
}

// Validate checks the genesis without touching state: params, unique and
// well-formed participants and inferences, a group consistent with the epoch.
func (gs GenesisState) Validate(ac address.Codec) error {
	if err := gs.Params.Validate(); err != nil {
		return fmt.Errorf("params: %w", err)
	}
	seen := make(map[string]struct{}, len(gs.Participants))
	for i, p := range gs.Participants {
		if err := ValidateParticipant(ac, p); err != nil {
			return fmt.Errorf("participant %d: %w", i, err)
		}
		if _, dup := seen[p.Address]; dup {
			return fmt.Errorf("participant %s listed twice", p.Address)
		}
		seen[p.Address] = struct{}{}
	}
	if gs.EpochGroup != nil {
		if gs.Epoch == nil || gs.EpochGroup.EpochIndex != gs.Epoch.Index {
			return fmt.Errorf("epoch_group needs an epoch with the same index")
		}
		if err := validateGroup(ac, *gs.EpochGroup); err != nil {
			return fmt.Errorf("epoch_group: %w", err)
		}
	}
	if gs.Epoch != nil && (gs.Epoch.Index == 0 || gs.Epoch.StartHeight < 0) {
		return fmt.Errorf("epoch index must be >= 1 and start_height >= 0")
	}
	ids := make(map[string]struct{}, len(gs.Inferences))
	for _, inf := range gs.Inferences {
		if err := validateInference(ac, inf); err != nil {
			return fmt.Errorf("inference %q: %w", inf.InferenceId, err)
		}
		if _, dup := ids[inf.InferenceId]; dup {
			return fmt.Errorf("inference %q listed twice", inf.InferenceId)
		}
		ids[inf.InferenceId] = struct{}{}
	}
	return nil
}

// ValidateParticipant checks a stored participant record.
func ValidateParticipant(ac address.Codec, p Participant) error {
	if _, err := ac.StringToBytes(p.Address); err != nil {
		return fmt.Errorf("address %q: %w", p.Address, err)
	}
	if err := ValidateInferenceURL(p.InferenceUrl); err != nil {
		return err
	}
	models, err := NormalizeModels(p.Models)
	if err != nil {
		return err
	}
	for i := range models {
		if models[i] != p.Models[i] {
			return fmt.Errorf("models must be sorted")
		}
	}
	if err := ValidateWeight(p.Weight); err != nil {
		return err
	}
	if _, ok := ParticipantStatus_name[int32(p.Status)]; !ok || p.Status == PARTICIPANT_STATUS_UNSPECIFIED {
		return fmt.Errorf("status %d is not a participant status", p.Status)
	}
	return nil
}

func validateGroup(ac address.Codec, g EpochGroup) error {
	var prev []byte
	for i, m := range g.Members {
		bz, err := ac.StringToBytes(m.Address)
		if err != nil {
			return fmt.Errorf("member %d address: %w", i, err)
		}
		if prev != nil && bytes.Compare(prev, bz) >= 0 {
			return fmt.Errorf("members must be sorted by address bytes and unique (at %d)", i)
		}
		prev = bz
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
		if _, err := ac.StringToBytes(a); err != nil {
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
	return nil
}
