package types_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/inferenced/inferenced/x/inference/types"
)

// prune_heights names closed inferences of the genesis, once each, at a
// height after their end (TestPruneHeightsSurviveExportAfterARetentionChange
// in the keeper is what they are for).
func TestGenesisValidatesPruneHeights(t *testing.T) {
	closed := func() types.GenesisState {
		gs := validGenesis()
		inf := gs.Inferences[0]
		inf.InferenceId, inf.Status, inf.EndHeight = "i-2", types.INFERENCE_STATUS_FINISHED, 15
		gs.Inferences = append(gs.Inferences, inf)
		gs.PruneHeights = []types.PruneHeight{{TransferAgent: bech(9), InferenceId: "i-2", Height: 115}}
		return gs
	}
	gs := closed()
	require.NoError(t, gs.Validate(ac))
	cases := []struct {
		name, mention string
		edit          func(*types.GenesisState)
	}{
		{"a started inference", "no closed inference", func(gs *types.GenesisState) { gs.PruneHeights[0].InferenceId = "i-1" }},
		{"an unknown id", "no closed inference", func(gs *types.GenesisState) { gs.PruneHeights[0].InferenceId = "i-9" }},
		{"another agent", "no closed inference", func(gs *types.GenesisState) { gs.PruneHeights[0].TransferAgent = bech(8) }},
		{"twice", "twice", func(gs *types.GenesisState) { gs.PruneHeights = append(gs.PruneHeights, gs.PruneHeights[0]) }},
		{"at its end height", "must be in", func(gs *types.GenesisState) { gs.PruneHeights[0].Height = 15 }},
		{"beyond any retention", "must be in", func(gs *types.GenesisState) { gs.PruneHeights[0].Height = 1 << 62 }},
		{"upper-case agent", "transfer agent", func(gs *types.GenesisState) {
			gs.PruneHeights[0].TransferAgent = strings.ToUpper(gs.PruneHeights[0].TransferAgent)
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			gs := closed()
			c.edit(&gs)
			require.ErrorContains(t, gs.Validate(ac), c.mention)
		})
	}
}
