package main

import (
	"context"
	"fmt"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/cosmos/cosmos-sdk/client/grpc/cmtservice"
	"github.com/cosmos/cosmos-sdk/codec"
	sdk "github.com/cosmos/cosmos-sdk/types"
	txtypes "github.com/cosmos/cosmos-sdk/types/tx"
	authtypes "github.com/cosmos/cosmos-sdk/x/auth/types"

	"github.com/inferenced/inferenced/x/inference/types"
)

// chain is the load driver's view of one node, over gRPC.
type chain struct {
	conn      *grpc.ClientConn
	cdc       codec.Codec
	inference types.QueryClient
	auth      authtypes.QueryClient
	tx        txtypes.ServiceClient
	comet     cmtservice.ServiceClient
}

func dialChain(addr string, cdc codec.Codec) (*chain, error) {
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return nil, fmt.Errorf("dial %s: %w", addr, err)
	}
	return &chain{
		conn:      conn,
		cdc:       cdc,
		inference: types.NewQueryClient(conn),
		auth:      authtypes.NewQueryClient(conn),
		tx:        txtypes.NewServiceClient(conn),
		comet:     cmtservice.NewServiceClient(conn),
	}, nil
}

func (c *chain) height(ctx context.Context) (int64, error) {
	res, err := c.comet.GetLatestBlock(ctx, &cmtservice.GetLatestBlockRequest{})
	if err != nil {
		return 0, fmt.Errorf("latest block: %w", err)
	}
	return res.SdkBlock.Header.Height, nil
}

// maxBlockWait is how long the driver waits for the next block before it
// gives up on the node.
const maxBlockWait = time.Minute

// waitForBlockAfter polls until a block above h is committed.
func (c *chain) waitForBlockAfter(ctx context.Context, h int64) (int64, error) {
	ticker := time.NewTicker(100 * time.Millisecond)
	defer ticker.Stop()
	deadline := time.Now().Add(maxBlockWait)
	for {
		now, err := c.height(ctx)
		if err == nil && now > h {
			return now, nil
		}
		if time.Now().After(deadline) {
			return 0, fmt.Errorf("no block after %d in %s (last error: %v)", h, maxBlockWait, err)
		}
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-ticker.C:
		}
	}
}

// account returns the account number and sequence of addr.
func (c *chain) account(ctx context.Context, addr string) (uint64, uint64, error) {
	res, err := c.auth.Account(ctx, &authtypes.QueryAccountRequest{Address: addr})
	if err != nil {
		return 0, 0, fmt.Errorf("account %s: %w", addr, err)
	}
	var acc sdk.AccountI
	if err := c.cdc.UnpackAny(res.Account, &acc); err != nil {
		return 0, 0, fmt.Errorf("decode account %s: %w", addr, err)
	}
	return acc.GetAccountNumber(), acc.GetSequence(), nil
}

// broadcast submits tx bytes and returns the CheckTx code, tx hash and log.
func (c *chain) broadcast(ctx context.Context, bz []byte) (uint32, string, string, error) {
	res, err := c.tx.BroadcastTx(ctx, &txtypes.BroadcastTxRequest{TxBytes: bz, Mode: txtypes.BroadcastMode_BROADCAST_MODE_SYNC})
	if err != nil {
		return 0, "", "", fmt.Errorf("broadcast: %w", err)
	}
	return res.TxResponse.Code, res.TxResponse.TxHash, res.TxResponse.RawLog, nil
}

// txResult is what a committed transaction did: the block that executed it
// and, if it failed there, why.
type txResult struct {
	height  int64
	refused *refusal // nil: the transaction succeeded
}

// committedTx looks up a transaction by hash; ok is false while it is not
// committed (or not indexed yet).
func (c *chain) committedTx(ctx context.Context, hash string) (txResult, bool, error) {
	res, err := c.tx.GetTx(ctx, &txtypes.GetTxRequest{Hash: hash})
	switch {
	case status.Code(err) == codes.NotFound:
		return txResult{}, false, nil
	case err != nil:
		return txResult{}, false, fmt.Errorf("tx %s: %w", hash, err)
	}
	out := txResult{height: res.TxResponse.Height}
	if res.TxResponse.Code != 0 {
		out.refused = newRefusal(res.TxResponse.Code, res.TxResponse.RawLog)
	}
	return out, true, nil
}
