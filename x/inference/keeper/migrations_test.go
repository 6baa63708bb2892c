package keeper_test

import (
	"testing"

	sdkmath "cosmossdk.io/math"
	sdk "github.com/cosmos/cosmos-sdk/types"
	"github.com/stretchr/testify/require"

	"github.com/inferenced/inferenced/x/inference/inferences"
	"github.com/inferenced/inferenced/x/inference/types"
)

// A version-1 store has params without the transfer-agent fields; the
// migration gives them their defaults and keeps everything else.
func TestMigrate1to2FillsTheNewParams(t *testing.T) {
	f := newFixture(t)
	old := testParams()
	old.TransferAgentMinBond = sdk.Coin{}
	old.MaxTransferAgents, old.TransferAgentMissAllowance, old.TransferAgentMissAllowancePct = 0, 0, 0
	old.HealthCbTrafficMinAgents = 0
	withoutTrafficRule(&old) // nor version 3's
	require.Error(t, old.Validate(), "version-1 params no longer validate")
	require.NoError(t, f.k.Params.Set(f.ctx, old))

	require.NoError(t, newMigrator(*f.k).Migrate1to2(f.ctx))
	got, err := f.k.Params.Get(f.ctx)
	require.NoError(t, err)
	want := withDefaultTrafficRule(testParams())
	require.Equal(t, want, got)
	// Migrate2to3, which the module manager runs next, then changes nothing.
	require.NoError(t, newMigrator(*f.k).Migrate2to3(f.ctx))
	got, err = f.k.Params.Get(f.ctx)
	require.NoError(t, err)
	require.Equal(t, want, got)

	// Run twice (an operator re-running the upgrade): nothing changes, and
	// values governance set are kept.
	custom := want
	custom.TransferAgentMinBond = sdk.NewCoin("uinfer", sdkmath.NewInt(5))
	custom.HealthCbTrafficMinAgents = 3
	require.NoError(t, f.k.Params.Set(f.ctx, custom))
	require.NoError(t, newMigrator(*f.k).Migrate1to2(f.ctx))
	got, err = f.k.Params.Get(f.ctx)
	require.NoError(t, err)
	require.Equal(t, custom, got)
}

// An outcome queued by the last version-1 block carries no agent; the
// migration gives it its inference's, so the evidence ledger never holds a
// miss of no agent (which genesis export would then fail to validate).
func TestMigrate1to2AttributesQueuedOutcomes(t *testing.T) {
	f := newFixture(t, withParticipants(gp(1, 10, true, "m")))
	f.begin(1)
	f.mustStart("v1", 1, "m")
	inf := f.inference("v1")
	inf.Status, inf.EndHeight = types.INFERENCE_STATUS_EXPIRED, 11
	// Stored as version 1 (and 3) keyed it, by id alone.
	deleteInference(t, f.ctx, *f.k, inferences.NewKey(addr(agentByte), "v1"))
	require.NoError(t, newMigrator(*f.k).SetV3Inference(f.ctx, inf))
	v1 := inf
	v1.TransferAgent, v1.EndHeight = "", 0 // as version 1 queued it
	require.NoError(t, f.k.Breaker().QueueOutcome(f.ctx, v1, true))

	require.NoError(t, newMigrator(*f.k).Migrate1to2(f.ctx))
	pending := f.census().Pending
	require.Len(t, pending, 1)
	require.Equal(t, bech(agentByte), pending[0].Sample.Agent)
	require.Equal(t, int64(11), pending[0].Sample.EndHeight)
}
