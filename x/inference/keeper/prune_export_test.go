package keeper_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/inferenced/inferenced/x/inference/testutil"
	"github.com/inferenced/inferenced/x/inference/types"
)

// Found by make test-sim (its import/export comparison): genesis carried no
// prune height, so an import re-derived each closed inference's from its
// end height and the genesis params. Once governance had changed
// inference_retention_epochs (or epoch_length) after an inference closed,
// the imported chain pruned it at another height than the exporting chain
// would have, and the two stores differed. The export now carries the
// prune heights and the import keeps them.
func TestPruneHeightsSurviveExportAfterARetentionChange(t *testing.T) {
	f := newFixture(t, withParticipants(gp(1, 100, true, "m")))
	f.block(1)
	f.begin(2)
	_, err := f.startAs(agentByte, "p-1", 1, "m")
	require.NoError(t, err)
	require.NoError(t, f.finishOf(1, agentByte, "p-1"))
	f.end()
	p := testParams()
	p.InferenceRetentionEpochs = 5
	_, err = f.msg.UpdateParams(f.ctx, &types.MsgUpdateParams{Authority: authority(t), Params: p})
	require.NoError(t, err)

	before := indexEntries(t, f.ctx, *f.k, types.PruneIndexPrefix)
	require.Len(t, before, 1)
	require.Equal(t, int64(2)+testParams().RetentionBlocks(), before[0].K1(), "fixed at close, with the params of that block")
	gs, err := f.k.ExportGenesis(f.ctx)
	require.NoError(t, err)
	require.NoError(t, gs.Validate(ac))
	require.Equal(t, []types.PruneHeight{{TransferAgent: bech(agentByte), InferenceId: "p-1", Height: before[0].K1()}}, gs.PruneHeights)

	k2, tc2, bank2 := testutil.KeeperWithBank(t)
	bank2.HoldBonds(gs.TransferAgents)
	bank2.HoldParticipantBonds(gs.Participants)
	require.NoError(t, k2.InitGenesis(tc2.Ctx, *gs))
	require.Equal(t, before, indexEntries(t, tc2.Ctx, k2, types.PruneIndexPrefix), "imported at the exporting chain's prune height")

	gs.PruneHeights = nil // a genesis from before the field: re-derived from its params, as before
	k3, tc3, bank3 := testutil.KeeperWithBank(t)
	bank3.HoldBonds(gs.TransferAgents)
	bank3.HoldParticipantBonds(gs.Participants)
	require.NoError(t, k3.InitGenesis(tc3.Ctx, *gs))
	require.Equal(t, int64(2)+p.RetentionBlocks(), indexEntries(t, tc3.Ctx, k3, types.PruneIndexPrefix)[0].K1())
}
