package breakerstore

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"testing"

	cmtproto "github.com/cometbft/cometbft/proto/tendermint/types"
	dbm "github.com/cosmos/cosmos-db"
	"github.com/stretchr/testify/require"

	"cosmossdk.io/collections"
	"cosmossdk.io/log/v2"
	"github.com/cosmos/cosmos-sdk/store/v2"
	storetypes "github.com/cosmos/cosmos-sdk/store/v2/types"

	"github.com/cosmos/cosmos-sdk/codec"
	codectypes "github.com/cosmos/cosmos-sdk/codec/types"
	"github.com/cosmos/cosmos-sdk/runtime"
	sdk "github.com/cosmos/cosmos-sdk/types"

	"github.com/inferenced/inferenced/x/inference/types"
)

// stepEnv is a chain's store for the breaker's step, with no keeper: one
// IAVL store holding the breaker's collections and, under the keeper's
// prefixes, the epoch group, the model weights and the participants'
// successes, read through collections as the keeper reads them (so the
// group's reads cost what they cost on chain). Each block runs on a cache
// of the committed store, is written and committed, as a node does: the
// commit hash covers every key written in the block (IAVL versions a leaf
// that is set again, even to the same value), not only the contents.
type stepEnv struct {
	cms  store.CommitMultiStore
	key  *storetypes.KVStoreKey
	s    Store
	g    *groupReads
	base sdk.Context
}

// groupReads is breakerstore.Reads over the keeper's own collections.
type groupReads struct {
	members      collections.Map[uint32, types.EpochMember]
	index        collections.Map[sdk.AccAddress, uint32]
	weights      collections.Map[string, uint64]
	participants collections.Map[sdk.AccAddress, types.Participant]
	// epoch counts the groups set (setGroup): the epoch index.
	epoch uint64
}

func (g *groupReads) EpochIndex(context.Context) (uint64, error) { return g.epoch, nil }

func (g *groupReads) MemberIndex(ctx context.Context, addr sdk.AccAddress) (uint32, bool, error) {
	i, err := g.index.Get(ctx, addr)
	if errors.Is(err, collections.ErrNotFound) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, fmt.Errorf("look up epoch member: %w", err)
	}
	return i, true, nil
}

func (g *groupReads) MemberAt(ctx context.Context, index uint32) (types.EpochMember, error) {
	m, err := g.members.Get(ctx, index)
	if err != nil {
		return types.EpochMember{}, fmt.Errorf("epoch member %d: %w", index, err)
	}
	return m, nil
}

func (g *groupReads) ModelWeight(ctx context.Context, model string) (uint64, error) {
	w, err := g.weights.Get(ctx, model)
	if errors.Is(err, collections.ErrNotFound) {
		return 0, nil
	}
	return w, err
}

func (g *groupReads) EpochSuccesses(ctx context.Context, addr sdk.AccAddress) (uint64, error) {
	p, err := g.participants.Get(ctx, addr)
	if errors.Is(err, collections.ErrNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	return p.CurrentEpochStats.InferenceCount, nil
}

func newStepEnv(tb testing.TB) *stepEnv {
	tb.Helper()
	db := dbm.NewMemDB()
	key := storetypes.NewKVStoreKey(types.StoreKey)
	cms := store.NewCommitMultiStore(db, log.NewNopLogger())
	cms.MountStoreWithDB(key, storetypes.StoreTypeIAVL, db)
	require.NoError(tb, cms.LoadLatestVersion())
	cdc := codec.NewProtoCodec(codectypes.NewInterfaceRegistry())
	sb := collections.NewSchemaBuilder(runtime.NewKVStoreService(key))
	g := &groupReads{
		members:      collections.NewMap(sb, types.EpochMembersPrefix, "epoch_members", collections.Uint32Key, codec.CollValue[types.EpochMember](cdc)),
		index:        collections.NewMap(sb, types.EpochMemberIndexPrefix, "epoch_member_index", sdk.AccAddressKey, collections.Uint32Value),
		weights:      collections.NewMap(sb, types.ModelWeightsPrefix, "model_weights", collections.StringKey, collections.Uint64Value),
		participants: collections.NewMap(sb, types.ParticipantsPrefix, "participants", sdk.AccAddressKey, codec.CollValue[types.Participant](cdc)),
	}
	s := NewStore(sb, cdc, ac, g)
	_, err := sb.Build()
	require.NoError(tb, err)
	return &stepEnv{cms: cms, key: key, s: s, g: g, base: sdk.NewContext(cms, cmtproto.Header{}, false, log.NewNopLogger())}
}

// envAddr is the test executor i's 20-byte address (distinct from the
// fixtures' repeated-byte ones).
func envAddr(i int) sdk.AccAddress {
	a := make([]byte, 20)
	a[0] = 0xE0
	binary.BigEndian.PutUint32(a[16:], uint32(i))
	return a
}

// envMember is one executor of the group to set.
type envMember struct {
	addr   sdk.AccAddress
	weight uint64
	models []string
}

// block is a context for one block at height on a cache of the committed
// store; commit writes it and commits.
func (e *stepEnv) block(height int64) (sdk.Context, storetypes.CacheMultiStore) {
	cache := e.cms.CacheMultiStore()
	return e.base.WithMultiStore(cache).WithBlockHeight(height).WithEventManager(sdk.NewEventManager()), cache
}

// commit writes a block's cache and commits; it returns the commit hash.
func (e *stepEnv) commit(cache storetypes.CacheMultiStore) []byte {
	cache.Write()
	return e.cms.Commit().Hash
}

// setGroup replaces the epoch group (members sorted by address, as the
// keeper snapshots them) and the model weights, and zeroes the
// participants' successes (an epoch boundary resets them).
func (e *stepEnv) setGroup(tb testing.TB, ctx context.Context, members []envMember) {
	tb.Helper()
	e.g.epoch++
	require.NoError(tb, e.g.members.Clear(ctx, nil))
	require.NoError(tb, e.g.index.Clear(ctx, nil))
	require.NoError(tb, e.g.weights.Clear(ctx, nil))
	require.NoError(tb, e.g.participants.Clear(ctx, nil))
	members = slices.Clone(members)
	slices.SortFunc(members, func(a, b envMember) int { return bytes.Compare(a.addr, b.addr) })
	var models []string
	weights := map[string]uint64{}
	for i, m := range members {
		address, err := ac.BytesToString(m.addr)
		require.NoError(tb, err)
		require.NoError(tb, e.g.members.Set(ctx, uint32(i), types.EpochMember{
			Address: address, Weight: m.weight, Models: m.models, InferenceUrl: "http://x.example/", PocAvailable: true,
		}))
		require.NoError(tb, e.g.index.Set(ctx, m.addr, uint32(i)))
		require.NoError(tb, e.g.participants.Set(ctx, m.addr, types.Participant{
			Address: address, InferenceUrl: "http://x.example/", Models: m.models, Weight: m.weight,
			Status: types.PARTICIPANT_STATUS_ACTIVE, PocAvailable: true,
		}))
		for _, model := range m.models {
			if _, ok := weights[model]; !ok {
				models = append(models, model)
			}
			weights[model] += m.weight
		}
	}
	for _, model := range models {
		require.NoError(tb, e.g.weights.Set(ctx, model, weights[model]))
	}
}

// finished counts one finished inference of addr this epoch.
func (e *stepEnv) finished(tb testing.TB, ctx context.Context, addr sdk.AccAddress) {
	tb.Helper()
	p, err := e.g.participants.Get(ctx, addr)
	if errors.Is(err, collections.ErrNotFound) {
		return
	}
	require.NoError(tb, err)
	p.CurrentEpochStats.InferenceCount++
	require.NoError(tb, e.g.participants.Set(ctx, addr, p))
}

// dump is every key and value of the committed module store, in order.
func (e *stepEnv) dump(tb testing.TB) [][2][]byte {
	tb.Helper()
	it := e.cms.GetKVStore(e.key).Iterator(nil, nil)
	defer func() { require.NoError(tb, it.Close()) }()
	var out [][2][]byte
	for ; it.Valid(); it.Next() {
		out = append(out, [2][]byte{slices.Clone(it.Key()), slices.Clone(it.Value())})
	}
	return out
}
