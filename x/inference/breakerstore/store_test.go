package breakerstore

import (
	"context"
	"fmt"
	"testing"

	"cosmossdk.io/collections"
	storetypes "github.com/cosmos/cosmos-sdk/store/v2/types"
	"github.com/stretchr/testify/require"

	"github.com/cosmos/cosmos-sdk/codec"
	addresscodec "github.com/cosmos/cosmos-sdk/codec/address"
	codectypes "github.com/cosmos/cosmos-sdk/codec/types"
	"github.com/cosmos/cosmos-sdk/runtime"
	"github.com/cosmos/cosmos-sdk/testutil"
	sdk "github.com/cosmos/cosmos-sdk/types"

	"github.com/inferenced/inferenced/x/inference/breaker"
	"github.com/inferenced/inferenced/x/inference/types"
)

var ac = addresscodec.NewBech32Codec("infer")

// noMembers reads an empty epoch group: enough for the store's own
// bookkeeping.
type noMembers struct{}

func (noMembers) MemberIndex(context.Context, sdk.AccAddress) (uint32, bool, error) {
	return 0, false, nil
}
func (noMembers) MemberAt(_ context.Context, i uint32) (types.EpochMember, error) {
	return types.EpochMember{}, fmt.Errorf("no member %d", i)
}
func (noMembers) EpochIndex(context.Context) (uint64, error)                     { return 0, nil }
func (noMembers) ModelWeight(context.Context, string) (uint64, error)            { return 0, nil }
func (noMembers) EpochSuccesses(context.Context, sdk.AccAddress) (uint64, error) { return 0, nil }

func newStore(t *testing.T) (Store, sdk.Context) {
	t.Helper()
	key := storetypes.NewKVStoreKey(types.StoreKey)
	tc := testutil.DefaultContextWithDB(t, key, storetypes.NewTransientStoreKey("transient_test"))
	sb := collections.NewSchemaBuilder(runtime.NewKVStoreService(key))
	s := NewStore(sb, codec.NewProtoCodec(codectypes.NewInterfaceRegistry()), ac, noMembers{})
	_, err := sb.Build()
	require.NoError(t, err)
	return s, tc.Ctx
}

func account(i byte) (sdk.AccAddress, string) {
	a := sdk.AccAddress(append(make([]byte, 19), i))
	s, _ := ac.BytesToString(a)
	return a, s
}

// Genesis restore is a save from no record: the cooldown entry, the gate
// and the count follow from the same code as on chain, and a record that
// holds nothing a fresh executor would not is not stored.
func TestRestoreKeepsTheIndexesOfSave(t *testing.T) {
	s, ctx := newStore(t)
	_, excluded := account(1)
	_, plain := account(2)
	require.NoError(t, s.Restore(ctx, types.ExecutorHealth{
		Address: excluded, State: types.HEALTH_STATE_EXCLUDED, ExcludedAt: 3, CooldownBlocks: 4, Exclusions: 1,
	}))
	require.NoError(t, s.Restore(ctx, types.ExecutorHealth{Address: plain}))
	c, err := s.read(ctx)
	require.NoError(t, err)
	require.Len(t, c.gs.ExecutorHealth, 1)
	require.Equal(t, uint64(1), c.recordCount)
	gate, _ := breaker.GateOf(breaker.Record{State: breaker.Excluded, ExcludedAt: 3, Cooldown: 4})
	require.Equal(t, []gateEntry{{address: excluded, gate: gate}}, c.gates)
	require.Len(t, c.cooldowns, 1)
	require.Equal(t, int64(7), c.cooldowns[0].K1())
	require.NoError(t, s.Invariants(ctx))
}

// An index entry without an EXCLUDED record due at its height is dropped,
// so it is not read again every block. (The index is only walked while the
// breaker holds someone: executor 1's miss gives it a record.)
func TestStaleCooldownEntryIsDropped(t *testing.T) {
	s, ctx := newStore(t)
	_, held := account(1)
	stale, staleAddr := account(3)
	require.NoError(t, s.Restore(ctx, types.ExecutorHealth{Address: held, Traffic: types.SampleWindow{Bits: 1, Count: 1}}))
	key := collections.Join(int64(6), stale)
	require.NoError(t, s.cooldowns.Set(ctx, key))
	_, err := s.Step(ctx.WithBlockHeight(6), Block{Params: types.DefaultParams()})
	require.NoError(t, err)
	has, err := s.cooldowns.Has(ctx, key)
	require.NoError(t, err)
	require.False(t, has)
	st, err := s.Status(ctx, stale, types.DefaultParams().BreakerParams())
	require.NoError(t, err)
	require.Equal(t, types.HEALTH_STATE_HEALTHY, st.State, staleAddr)
}

// Invariants catch a record save would never write: one holding nothing a
// fresh executor would not, and one stored under another executor's key.
func TestInvariantsCatchRecordsSaveNeverWrites(t *testing.T) {
	a, aAddr := account(1)
	b, _ := account(2)
	excluded := types.ExecutorHealth{Address: aAddr, State: types.HEALTH_STATE_EXCLUDED, ExcludedAt: 3, CooldownBlocks: 4, Exclusions: 1}
	cases := []struct {
		name    string
		key     sdk.AccAddress
		rec     types.ExecutorHealth
		wantErr string
	}{
		{"plain record", a, types.ExecutorHealth{Address: aAddr}, "holds nothing a fresh executor would not"},
		{"record under another key", b, excluded, "names"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, ctx := newStore(t)
			require.NoError(t, s.records.Set(ctx, tc.key, tc.rec))
			require.NoError(t, s.recordCount.Set(ctx, 1))
			require.ErrorContains(t, s.Invariants(ctx), tc.wantErr)
		})
	}
}
