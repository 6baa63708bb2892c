package app

import (
	"slices"
	"testing"

	"cosmossdk.io/log/v2"
	dbm "github.com/cosmos/cosmos-db"
	"github.com/stretchr/testify/require"

	simtestutil "github.com/cosmos/cosmos-sdk/testutil/sims"
	banktypes "github.com/cosmos/cosmos-sdk/x/bank/types"

	"github.com/inferenced/inferenced/x/inference/escrow"
	inferencetypes "github.com/inferenced/inferenced/x/inference/types"
)

// The inference module account holds the transfer-agent bonds: it exists,
// takes no mint or burn permission, may not receive plain sends, and x/bank's
// genesis is loaded before x/inference checks that the bonds are held.
func TestInferenceModuleAccountHoldsBonds(t *testing.T) {
	perms, ok := maccPerms[inferencetypes.ModuleName]
	require.True(t, ok, "the inference module account is declared")
	require.Empty(t, perms)

	a, err := New(log.NewNopLogger(), dbm.NewMemDB(), false, simtestutil.NewAppOptionsWithFlagHome(t.TempDir()))
	require.NoError(t, err)
	holder := escrow.ModuleAddress()
	require.Equal(t, holder, a.AccountKeeper.GetModuleAddress(inferencetypes.ModuleName))
	require.True(t, a.BankKeeper.BlockedAddr(holder), "nobody can send to it outside x/inference")

	order := a.ModuleManager.OrderInitGenesis
	bank, inference := slices.Index(order, banktypes.ModuleName), slices.Index(order, inferencetypes.ModuleName)
	require.True(t, bank >= 0 && inference > bank, "genesis order %v", order)
}
