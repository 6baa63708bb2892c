package app

import (
	"testing"

	cmtproto "github.com/cometbft/cometbft/proto/tendermint/types"
	"github.com/cosmos/cosmos-sdk/runtime"
	storetypes "github.com/cosmos/cosmos-sdk/store/v2/types"
	"github.com/cosmos/cosmos-sdk/testutil"
	moduletestutil "github.com/cosmos/cosmos-sdk/types/module/testutil"
	consensuskeeper "github.com/cosmos/cosmos-sdk/x/consensus/keeper"
	consensustypes "github.com/cosmos/cosmos-sdk/x/consensus/types"
)

func TestEnableVoteExtensionsOnlyWhenOff(t *testing.T) {
	cases := []struct {
		name   string
		stored *cmtproto.ABCIParams
		want   int64
	}{
		{"no abci params: enabled at the given height", nil, 101},
		{"enable height 0: enabled at the given height", &cmtproto.ABCIParams{}, 101},
		{"already enabled: its height stands", &cmtproto.ABCIParams{VoteExtensionsEnableHeight: 50}, 50},
		{"enabled for later by governance: that height stands", &cmtproto.ABCIParams{VoteExtensionsEnableHeight: 500}, 500},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			key := storetypes.NewKVStoreKey(consensustypes.StoreKey)
			ctx := testutil.DefaultContextWithDB(t, key, storetypes.NewTransientStoreKey("transient")).Ctx
			k := consensuskeeper.NewKeeper(moduletestutil.MakeTestEncodingConfig().Codec,
				runtime.NewKVStoreService(key), "authority", runtime.EventService{})
			before := cmtproto.ConsensusParams{
				Block: &cmtproto.BlockParams{MaxBytes: 1 << 20, MaxGas: -1}, Abci: c.stored,
			}
			if err := k.ParamsStore.Set(ctx, before); err != nil {
				t.Fatal(err)
			}
			got, err := enableVoteExtensions(ctx, k.ParamsStore, 101)
			if err != nil || got != c.want {
				t.Fatalf("enable height %d, %v; want %d", got, err, c.want)
			}
			after, err := k.ParamsStore.Get(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if after.Abci == nil || after.Abci.VoteExtensionsEnableHeight != c.want {
				t.Fatalf("stored %+v, want enable height %d", after.Abci, c.want)
			}
			if after.Block.MaxBytes != before.Block.MaxBytes {
				t.Fatalf("other params changed: %+v", after.Block)
			}
		})
	}
}

// A height that is not after the block setting it would be refused by
// CometBFT when the block's consensus params reach it: the handler fails
// the upgrade block instead, with the heights in the error.
func TestEnableVoteExtensionsRefusesAPastHeight(t *testing.T) {
	key := storetypes.NewKVStoreKey(consensustypes.StoreKey)
	ctx := testutil.DefaultContextWithDB(t, key, storetypes.NewTransientStoreKey("transient")).Ctx.WithBlockHeight(200)
	k := consensuskeeper.NewKeeper(moduletestutil.MakeTestEncodingConfig().Codec,
		runtime.NewKVStoreService(key), "authority", runtime.EventService{})
	if err := k.ParamsStore.Set(ctx, cmtproto.ConsensusParams{Block: &cmtproto.BlockParams{MaxBytes: 1 << 20, MaxGas: -1}}); err != nil {
		t.Fatal(err)
	}
	for _, h := range []int64{101, 200} {
		if _, err := enableVoteExtensions(ctx, k.ParamsStore, h); err == nil {
			t.Errorf("enable height %d at block 200: no error", h)
		}
	}
	after, err := k.ParamsStore.Get(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if after.Abci != nil && after.Abci.VoteExtensionsEnableHeight != 0 {
		t.Fatalf("a refused height was stored: %+v", after.Abci)
	}
}

func TestEnableVoteExtensionsFailsWithoutParams(t *testing.T) {
	key := storetypes.NewKVStoreKey(consensustypes.StoreKey)
	ctx := testutil.DefaultContextWithDB(t, key, storetypes.NewTransientStoreKey("transient")).Ctx
	k := consensuskeeper.NewKeeper(moduletestutil.MakeTestEncodingConfig().Codec,
		runtime.NewKVStoreService(key), "authority", runtime.EventService{})
	if _, err := enableVoteExtensions(ctx, k.ParamsStore, 101); err == nil {
		t.Fatal("no consensus params, but no error")
	}
}
