// Package testutil builds x/inference keepers for tests and benchmarks in
// every package, from the keeper's exported API only: a keeper over an
// in-memory store (and an in-memory bank), with a genesis of n executors
// and two bonded transfer agents, as a node's committed state shows it.
// It imports nothing above the keeper.
package testutil

import (
	"encoding/binary"
	"testing"

	storetypes "github.com/cosmos/cosmos-sdk/store/v2/types"
	"github.com/stretchr/testify/require"

	"github.com/cosmos/cosmos-sdk/runtime"
	"github.com/cosmos/cosmos-sdk/testutil"
	sdk "github.com/cosmos/cosmos-sdk/types"
	moduletestutil "github.com/cosmos/cosmos-sdk/types/module/testutil"
	authtypes "github.com/cosmos/cosmos-sdk/x/auth/types"

	"github.com/inferenced/inferenced/x/inference/keeper"
	"github.com/inferenced/inferenced/x/inference/testutil/testkit"
	"github.com/inferenced/inferenced/x/inference/types"
)

// Model is the model every executor of Network serves.
const Model = "m"

// AddressCodec is the chain's account address codec (bech32 "infer").
var AddressCodec = testkit.AddressCodec

// Keeper is a bare keeper on an in-memory store, with no genesis, and the
// test context over that store.
func Keeper(tb testing.TB) (keeper.Keeper, testutil.TestContext) {
	tb.Helper()
	k, tc, _ := KeeperWithBank(tb)
	return k, tc
}

// KeeperWithBank is Keeper and its in-memory bank, empty, in which the
// x/inference module account is blocked as the app blocks it.
func KeeperWithBank(tb testing.TB) (keeper.Keeper, testutil.TestContext, *Bank) {
	tb.Helper()
	key := storetypes.NewKVStoreKey(types.StoreKey)
	tc := testutil.DefaultContextWithDB(tb, key, storetypes.NewTransientStoreKey("transient_test"))
	enc := moduletestutil.MakeTestEncodingConfig()
	types.RegisterInterfaces(enc.InterfaceRegistry)
	authority, err := AddressCodec.BytesToString(authtypes.NewModuleAddress("gov"))
	require.NoError(tb, err)
	bank := NewBank(types.ModuleName)
	k, err := keeper.NewKeeper(enc.Codec, runtime.NewKVStoreService(key), AddressCodec, authority, bank)
	require.NoError(tb, err)
	return k, tc, bank
}

// Network is a keeper with n ACTIVE executors of weight 100 serving Model
// under params, in epoch 1 at height 1 (genesis, then BeginBlock 1). setup,
// if not nil, runs before the state is committed. The returned context
// reads the committed state through a cache, as queries and blocks do (an
// uncommitted IAVL tree makes every iterator sort all pending writes, which
// no node ever pays). Executor i has the address 0…0 | i+1. The transfer
// agents Agents() are registered with the minimum bond, so either may start
// inferences.
func Network(tb testing.TB, n int, params types.Params, setup func(keeper.Keeper, sdk.Context, []sdk.AccAddress)) (keeper.Keeper, sdk.Context, []sdk.AccAddress) {
	tb.Helper()
	k, tc, bank := KeeperWithBank(tb)
	gs := types.DefaultGenesis()
	gs.Params = params
	agents, err := BondedAgents(params, Agents()...)
	require.NoError(tb, err)
	gs.TransferAgents = agents
	bank.HoldBonds(agents)
	addrs := make([]sdk.AccAddress, n)
	for i := range addrs {
		a := make([]byte, 20)
		binary.BigEndian.PutUint32(a[16:], uint32(i+1))
		addrs[i] = a
		s, err := AddressCodec.BytesToString(a)
		require.NoError(tb, err)
		gs.Participants = append(gs.Participants, types.Participant{
			Address: s, InferenceUrl: "http://x.example/", Models: []string{Model}, Weight: 100,
			PocAvailable: true, Status: types.PARTICIPANT_STATUS_ACTIVE, Bond: types.BondForWeight(100, params),
		})
	}
	bank.HoldParticipantBonds(gs.Participants)
	ctx := tc.Ctx.WithBlockHeight(0)
	require.NoError(tb, k.InitGenesis(ctx, *gs))
	ctx = ctx.WithBlockHeight(1)
	require.NoError(tb, k.BeginBlock(ctx))
	if setup != nil {
		setup(k, ctx, addrs)
	}
	tc.CMS.Commit()
	return k, ctx.WithMultiStore(tc.CMS.CacheMultiStore()), addrs
}

// ExcludeEveryTenth is a Network setup that holds every tenth executor
// EXCLUDED for cooldown blocks from height 1 (the selection benchmarks'
// 10% excluded).
func ExcludeEveryTenth(tb testing.TB, cooldown uint64) func(keeper.Keeper, sdk.Context, []sdk.AccAddress) {
	return func(k keeper.Keeper, ctx sdk.Context, addrs []sdk.AccAddress) {
		for i := 0; i < len(addrs); i += 10 {
			s, err := AddressCodec.BytesToString(addrs[i])
			require.NoError(tb, err)
			require.NoError(tb, k.Breaker().Restore(ctx, types.ExecutorHealth{
				Address: s, State: types.HEALTH_STATE_EXCLUDED, ExcludedAt: 1, CooldownBlocks: cooldown, Exclusions: 1,
			}))
		}
	}
}
