package types

import (
	"fmt"

	"cosmossdk.io/core/address"
)

// maxRetentionBlocks is the most blocks any valid params keep a closed
// inference (RetentionBlocks at both caps): 10^12, far from overflow.
const maxRetentionBlocks = int64(MaxInferenceRetentionEpochs * MaxEpochLength)

// validatePruneHeights checks prune_heights: each names a closed inference
// of the genesis by its canonical transfer agent and id, at most once, at a
// height after its end height and no further than any params keep it.
func (gs GenesisState) validatePruneHeights(ac address.Codec) error {
	closed := make(map[string]int64, len(gs.Inferences)) // key -> end height
	for _, inf := range gs.Inferences {
		if inf.Status == INFERENCE_STATUS_STARTED {
			continue
		}
		key, err := inferenceKey(ac, inf.TransferAgent, inf.InferenceId)
		if err != nil {
			return err
		}
		closed[key] = inf.EndHeight
	}
	seen := make(map[string]struct{}, len(gs.PruneHeights))
	for _, p := range gs.PruneHeights {
		if _, err := CanonicalAddress(ac, p.TransferAgent); err != nil {
			return fmt.Errorf("prune height of %q: transfer agent %q: %w", p.InferenceId, p.TransferAgent, err)
		}
		key, err := inferenceKey(ac, p.TransferAgent, p.InferenceId)
		if err != nil {
			return err
		}
		end, ok := closed[key]
		if !ok {
			return fmt.Errorf("prune height of %q of transfer agent %s names no closed inference", p.InferenceId, p.TransferAgent)
		}
		if _, dup := seen[key]; dup {
			return fmt.Errorf("prune height of %q of transfer agent %s listed twice", p.InferenceId, p.TransferAgent)
		}
		seen[key] = struct{}{}
		if p.Height <= end || p.Height > end+maxRetentionBlocks {
			return fmt.Errorf("prune height %d of %q must be in (end_height %d, end_height + %d]", p.Height, p.InferenceId, end, maxRetentionBlocks)
		}
	}
	return nil
}
