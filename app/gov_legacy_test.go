package app

import (
	"testing"

	"cosmossdk.io/log/v2"
	cmtproto "github.com/cometbft/cometbft/proto/tendermint/types"
	dbm "github.com/cosmos/cosmos-db"
	"github.com/stretchr/testify/require"

	simtestutil "github.com/cosmos/cosmos-sdk/testutil/sims"
	sdk "github.com/cosmos/cosmos-sdk/types"
	govkeeper "github.com/cosmos/cosmos-sdk/x/gov/keeper"
	govtypes "github.com/cosmos/cosmos-sdk/x/gov/types"
	govv1 "github.com/cosmos/cosmos-sdk/x/gov/types/v1"
	govv1beta1 "github.com/cosmos/cosmos-sdk/x/gov/types/v1beta1"
)

// Found by make test-sim (x/gov's legacy text proposal operation): x/gov
// had no legacy proposal router, so submitting any legacy (v1beta1
// content) proposal dereferenced a nil router and panicked inside the
// transaction. It is refused with ErrNoProposalHandlerExists now; the
// chain handles no legacy content.
func TestLegacyProposalIsRefusedWithoutPanic(t *testing.T) {
	a, ctx := newTestApp(t)
	require.NoError(t, a.GovKeeper.Params.Set(ctx, govv1.DefaultParams()))
	authority := a.GovKeeper.GetGovernanceAccount(ctx).GetAddress().String()
	content, err := govv1.NewLegacyContent(govv1beta1.NewTextProposal("title", "description"), authority)
	require.NoError(t, err)
	msg, err := govv1.NewMsgSubmitProposal([]sdk.Msg{content}, nil, authority, "", "title", "summary", false)
	require.NoError(t, err)
	require.NotPanics(t, func() {
		_, err = govkeeper.NewMsgServerImpl(&a.GovKeeper).SubmitProposal(ctx, msg)
	})
	require.ErrorIs(t, err, govtypes.ErrNoProposalHandlerExists)
}

// newTestApp is a loaded app over an in-memory database and a context at
// height 1 that writes straight to its stores.
func newTestApp(t *testing.T) (*App, sdk.Context) {
	t.Helper()
	a, err := New(log.NewNopLogger(), dbm.NewMemDB(), true, simtestutil.NewAppOptionsWithFlagHome(t.TempDir()))
	require.NoError(t, err)
	return a, a.NewNextBlockContext(cmtproto.Header{Height: 1})
}
