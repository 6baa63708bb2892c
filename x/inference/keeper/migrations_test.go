package keeper_test

import (
	"testing"

	sdkmath "cosmossdk.io/math"
	sdk "github.com/cosmos/cosmos-sdk/types"
	"github.com/stretchr/testify/require"

	"github.com/inferenced/inferenced/x/inference/keeper"
)

// A version-1 store has params without the transfer-agent fields; the
// migration gives them their defaults and keeps everything else.
func TestMigrate1to2FillsTheNewParams(t *testing.T) {
	f := newFixture(t)
	old := testParams()
	old.TransferAgentMinBond = sdk.Coin{}
	old.MaxTransferAgents, old.TransferAgentMissAllowance, old.TransferAgentMissAllowancePct = 0, 0, 0
	old.HealthCbTrafficMinAgents = 0
	require.Error(t, old.Validate(), "version-1 params no longer validate")
	require.NoError(t, f.k.Params.Set(f.ctx, old))

	require.NoError(t, keeper.NewMigrator(*f.k).Migrate1to2(f.ctx))
	got, err := f.k.Params.Get(f.ctx)
	require.NoError(t, err)
	want := testParams()
	require.Equal(t, want, got)

	// Run twice (an operator re-running the upgrade): nothing changes, and
	// values governance set are kept.
	custom := want
	custom.TransferAgentMinBond = sdk.NewCoin("uinfer", sdkmath.NewInt(5))
	custom.HealthCbTrafficMinAgents = 3
	require.NoError(t, f.k.Params.Set(f.ctx, custom))
	require.NoError(t, keeper.NewMigrator(*f.k).Migrate1to2(f.ctx))
	got, err = f.k.Params.Get(f.ctx)
	require.NoError(t, err)
	require.Equal(t, custom, got)
}
