package keeper_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/inferenced/inferenced/x/inference/types"
)

// Governance raises participant_bond_per_weight above a participant's whole
// bond: it keeps serving at weight 1 (types.WeightCap), and the export of
// that state validates, so the chain can still be exported and restarted.
func TestPerWeightRaisedAboveABondStillExports(t *testing.T) {
	f := newFixture(t, withParticipants(gp(1, 100, true, "m"), gp(2, 1, true, "m")))
	f.block(1)
	p := testParams()
	p.ParticipantBondPerWeight = p.ParticipantBondPerWeight.MulRaw(2) // 20,000 > participant 2's 10,000
	_, err := f.msg.UpdateParams(f.ctx, &types.MsgUpdateParams{Authority: authority(t), Params: p})
	require.NoError(t, err)
	require.Equal(t, uint64(1), f.participant(2).Weight)
	require.Equal(t, uint64(50), f.participant(1).Weight, "100 units of bond at the doubled per-weight")
	out, err := f.k.ExportGenesis(f.ctx)
	require.NoError(t, err)
	require.NoError(t, out.Validate(ac), "export after a per-weight raise must validate")
}

// A departed executor's breaker record outlives its pruned inference when
// governance lengthens the epoch (prune heights are fixed at close): the
// export of that state validates.
func TestDepartedExecutorsRecordOutlivesItsPrunedInference(t *testing.T) {
	f := newFixture(t, withParticipants(gp(1, 100, true, "m"), gp(2, 100, true, "m")))
	f.block(1)
	f.advanceTo(testEpochLength - 2)
	exp := f.mustStart("expires-after", 1, "m")
	_, err := f.deregister(1)
	require.NoError(t, err)
	f.advanceTo(exp + 2)
	p := testParams()
	p.EpochLength = testEpochLength * 10
	_, err = f.msg.UpdateParams(f.ctx, &types.MsgUpdateParams{Authority: authority(t), Params: p})
	require.NoError(t, err)
	f.advanceTo(exp + 2*testEpochLength + 2)
	require.False(t, f.retained(agentByte, "expires-after"), "the inference is pruned before the longer epoch ends")
	hs, err := f.k.ExportGenesis(f.ctx)
	require.NoError(t, err)
	require.Len(t, hs.ExecutorHealth, 1, "the departed executor's record is still held")
	require.NoError(t, hs.Validate(ac))
}
