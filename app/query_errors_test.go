package app

import (
	"context"
	"strings"
	"testing"

	"cosmossdk.io/log/v2"
	abci "github.com/cometbft/cometbft/abci/types"
	cmtproto "github.com/cometbft/cometbft/proto/tendermint/types"
	dbm "github.com/cosmos/cosmos-db"
	simtestutil "github.com/cosmos/cosmos-sdk/testutil/sims"
	sdk "github.com/cosmos/cosmos-sdk/types"
	sdkerrors "github.com/cosmos/cosmos-sdk/types/errors"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	inferencetypes "github.com/inferenced/inferenced/x/inference/types"
)

// A query error goes through the node as the SDK carries it: baseapp
// puts the handler's error text in the ABCI log, and the client turns
// that log back into a gRPC status (client.Context's sdkErrorToGRPCError:
// status.Error(code, log)). A handler returning a plain status.Error had
// "rpc error: code = NotFound desc =" in its text, so the CLI printed it
// twice; the log must carry the message only, with its code.
func TestQueryErrorSaysItsCodeOnce(t *testing.T) {
	a, err := New(log.NewNopLogger(), dbm.NewMemDB(), true, simtestutil.NewAppOptionsWithFlagHome(t.TempDir()))
	require.NoError(t, err)
	ctx := a.NewNextBlockContext(cmtproto.Header{Height: 1})
	require.NoError(t, a.InferenceKeeper.Params.Set(ctx, inferencetypes.DefaultParams()))
	a.CommitMultiStore().Commit()

	agent := sdk.AccAddress(make([]byte, 20)).String()
	for _, c := range []struct {
		name string
		req  *inferencetypes.QueryInferenceRequest
		code uint32
		grpc codes.Code
		says string
	}{
		{"unknown inference", &inferencetypes.QueryInferenceRequest{TransferAgent: agent, InferenceId: "nope"},
			sdkerrors.ErrKeyNotFound.ABCICode(), codes.NotFound, `"nope" of transfer agent`},
		{"bad agent address", &inferencetypes.QueryInferenceRequest{TransferAgent: "infer1bad", InferenceId: "x"},
			sdkerrors.ErrInvalidRequest.ABCICode(), codes.InvalidArgument, "transfer_agent"},
	} {
		t.Run(c.name, func(t *testing.T) {
			data, err := c.req.Marshal()
			require.NoError(t, err)
			res, err := a.Query(context.Background(), &abci.RequestQuery{Path: "/inferenced.inference.v1.Query/Inference", Data: data})
			require.NoError(t, err)
			require.Equal(t, c.code, res.Code, "log: %s", res.Log)
			require.Contains(t, res.Log, c.says)
			require.NotContains(t, res.Log, "rpc error", "the ABCI log repeats a status prefix")
			// What the CLI prints: the prefix once.
			shown := status.Error(c.grpc, res.Log).Error()
			require.Equal(t, 1, strings.Count(shown, "rpc error: code ="), shown)
		})
	}
}
