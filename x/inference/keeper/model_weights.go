package keeper

import (
	"context"
	"fmt"
	"slices"

	"github.com/inferenced/inferenced/x/inference/types"
)

// storeModelWeights rewrites ModelWeights for a new epoch group, in model
// name order.
func (k Keeper) storeModelWeights(ctx context.Context, members []types.EpochMember) error {
	if err := k.ModelWeights.Clear(ctx, nil); err != nil {
		return fmt.Errorf("clear model weights: %w", err)
	}
	totals := map[string]uint64{}
	var models []string
	for _, m := range members {
		for _, model := range m.Models {
			if _, seen := totals[model]; !seen {
				models = append(models, model)
			}
			totals[model] = types.AddWeight(totals[model], m.Weight)
		}
	}
	slices.Sort(models)
	for _, model := range models {
		if err := k.ModelWeights.Set(ctx, model, totals[model]); err != nil {
			return fmt.Errorf("store model weight: %w", err)
		}
	}
	return nil
}
