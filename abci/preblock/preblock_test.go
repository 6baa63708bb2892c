package preblock_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/inferenced/inferenced/x/inference/testutil/testkit"

	abci "github.com/cometbft/cometbft/abci/types"
	cmtproto "github.com/cometbft/cometbft/proto/tendermint/types"
	"github.com/stretchr/testify/require"

	"cosmossdk.io/log/v2"
	sdk "github.com/cosmos/cosmos-sdk/types"

	"github.com/inferenced/inferenced/abci/preblock"
	"github.com/inferenced/inferenced/abci/proposals"
	"github.com/inferenced/inferenced/x/inference/keeper"
	"github.com/inferenced/inferenced/x/inference/testutil"
	"github.com/inferenced/inferenced/x/inference/types"
	"github.com/inferenced/inferenced/x/inference/verdict"
)

// breakerParams are x/inference's breaker test params with no exclusion
// cap.
func breakerParams() types.Params {
	p := testkit.BreakerParams()
	p.HealthCbMaxExcludedWeightPct = 100
	return p
}

// recordingBreaker is the real keeper, recording what the pre-blocker asks
// of it and what it applied; applyErr, if set, fails ApplyHealth.
type recordingBreaker struct {
	keeper   keeper.Keeper
	calls    []call
	applyErr error
}

// call is one ApplyHealth: its arguments and the samples it applied.
type call struct {
	epoch       uint64
	members     int
	samples     []byte
	service     []byte
	oks, misses int
}

func (r *recordingBreaker) ApplyHealth(ctx context.Context, epoch uint64, members int, samples, service []byte) (int, int, error) {
	if r.applyErr != nil {
		r.calls = append(r.calls, call{epoch: epoch, members: members, samples: samples, service: service})
		return 0, 0, r.applyErr
	}
	oks, misses, err := r.keeper.ApplyHealth(ctx, epoch, members, samples, service)
	r.calls = append(r.calls, call{epoch, members, samples, service, oks, misses})
	return oks, misses, err
}

// modules is a module manager's PreBlock.
type modules func(sdk.Context) (*sdk.ResponsePreBlock, error)

func (m modules) PreBlock(ctx sdk.Context) (*sdk.ResponsePreBlock, error) { return m(ctx) }

var inner = modules(func(sdk.Context) (*sdk.ResponsePreBlock, error) {
	return &sdk.ResponsePreBlock{ConsensusParamsChanged: true}, nil
})

// errorLog records the messages logged at Error.
type errorLog struct {
	log.Logger
	errors *[]string
}

func (l errorLog) Error(msg string, _ ...any) { *l.errors = append(*l.errors, msg) }
func (l errorLog) With(...any) log.Logger     { return l }

func bundle(t *testing.T, layout proposals.Layout, epoch uint64, vs ...verdict.Verdict) []byte {
	t.Helper()
	packed, err := verdict.Pack(vs)
	require.NoError(t, err)
	bz, err := proposals.Encode(proposals.Bundle{Layout: layout, Epoch: epoch, Members: len(vs), Samples: packed})
	require.NoError(t, err)
	return bz
}

// One case per kind of block the pre-blocker meets: what it asks the keeper
// and what it hands the breaker's step.
func TestPreBlockerAppliesTheBundleOfEachBlock(t *testing.T) {
	const height = 3
	k, base, addrs := testutil.Network(t, 4, breakerParams(), nil)
	epoch, n, err := k.VoteGroup(base, height-1)
	require.NoError(t, err)
	require.Equal(t, 4, n)
	good := bundle(t, proposals.LayoutV3, epoch, verdict.Miss, verdict.OK, verdict.Unknown, verdict.Unknown)
	goodV2 := bundle(t, proposals.LayoutV2, epoch, verdict.Miss, verdict.OK, verdict.Unknown, verdict.Unknown)
	empty, err := proposals.Encode(proposals.Bundle{Layout: proposals.LayoutV3})
	require.NoError(t, err)
	user := []byte{0x0a, 0x01, 0x00}
	packed := func(vs ...verdict.Verdict) []byte {
		bz, err := verdict.Pack(vs)
		require.NoError(t, err)
		return bz
	}
	none := call{}
	cases := []struct {
		name      string
		enable    int64 // vote_extensions_enable_height
		txs       [][]byte
		want      call   // what the step is asked, and applied
		wantError string // logged at Error
	}{
		{name: "extensions off", enable: 0, txs: [][]byte{good, user}, want: none},
		{name: "no transactions", enable: 2, want: none},
		{name: "no bundle", enable: 2, txs: [][]byte{user}, want: none},
		{name: "undecodable bundle", enable: 2, txs: [][]byte{append(slices.Clone(empty), 0xff)}, want: none,
			wantError: "undecodable health bundle in a decided block"},
		{name: "bundle that does not fit the group", enable: 2, txs: [][]byte{bundle(t, proposals.LayoutV3, epoch, verdict.Miss, verdict.OK, verdict.OK, verdict.OK, verdict.OK)},
			want:      call{epoch: epoch, members: 5, samples: packed(verdict.Miss, verdict.OK, verdict.OK, verdict.OK, verdict.OK)},
			wantError: "health bundle does not fit the epoch group; no attested samples applied"},
		{name: "bundle for another epoch", enable: 2, txs: [][]byte{bundle(t, proposals.LayoutV3, epoch+1, verdict.Miss, verdict.OK, verdict.OK, verdict.OK)},
			want: call{epoch: epoch + 1, members: 4, samples: packed(verdict.Miss, verdict.OK, verdict.OK, verdict.OK)}},
		{name: "empty bundle (attestations withheld)", enable: 2, txs: [][]byte{empty}, want: none},
		{name: "good bundle", enable: 2, txs: [][]byte{good, user},
			want: call{epoch: epoch, members: 4, samples: packed(verdict.Miss, verdict.OK, verdict.Unknown, verdict.Unknown), misses: 1}},
		// The block of the v3 upgrade height was proposed by the previous
		// release in HEALTH2 and is finalized by this one: its attestations
		// apply, as do those of any block before the switch.
		{name: "good bundle in the previous layout (HEALTH2)", enable: 2, txs: [][]byte{goodV2, user},
			want: call{epoch: epoch, members: 4, samples: packed(verdict.Miss, verdict.OK, verdict.Unknown, verdict.Unknown), misses: 1}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var logged []string
			ctx, _ := base.WithBlockHeight(height).WithLogger(errorLog{Logger: log.NewNopLogger(), errors: &logged}).
				WithConsensusParams(cmtproto.ConsensusParams{Abci: &cmtproto.ABCIParams{VoteExtensionsEnableHeight: c.enable}}).
				CacheContext()
			r := &recordingBreaker{keeper: k}
			rsp, err := preblock.NewHandler(r, proposals.NewAccepted()).WrappedPreBlocker(inner)(ctx, &abci.RequestFinalizeBlock{Height: height, Txs: c.txs})
			require.NoError(t, err)
			require.True(t, rsp.ConsensusParamsChanged, "the modules' response is returned")
			require.Len(t, r.calls, 1, "ApplyHealth runs once in every block")
			require.Equal(t, c.want, r.calls[0])
			if c.want.misses > 0 {
				st, err := keeper.NewQueryServerImpl(k, nil).ExecutorHealth(ctx, &types.QueryExecutorHealthRequest{Address: member(t, addrs[0])})
				require.NoError(t, err)
				require.Equal(t, uint32(1), st.Health.AttestedMisses, "the attested miss reached executor 0")
			}
			if c.wantError == "" {
				require.Empty(t, logged)
			} else {
				require.Equal(t, []string{c.wantError}, logged)
			}
		})
	}
}

func member(t *testing.T, a sdk.AccAddress) string {
	t.Helper()
	s, err := testutil.AddressCodec.BytesToString(a)
	require.NoError(t, err)
	return s
}

func TestPreBlockerPropagatesErrors(t *testing.T) {
	k, ctx, _ := testutil.Network(t, 4, breakerParams(), nil)
	ctx = ctx.WithBlockHeight(3)
	req := &abci.RequestFinalizeBlock{Height: 3}

	broken := errors.New("upgrade pre-blocker failed")
	r := &recordingBreaker{keeper: k}
	_, err := preblock.NewHandler(r, proposals.NewAccepted()).WrappedPreBlocker(modules(func(sdk.Context) (*sdk.ResponsePreBlock, error) {
		return nil, broken
	}))(ctx, req)
	require.ErrorIs(t, err, broken)
	require.Empty(t, r.calls, "no breaker step after a failed module pre-blocker")

	store := errors.New("store")
	r = &recordingBreaker{keeper: k, applyErr: store}
	_, err = preblock.NewHandler(r, proposals.NewAccepted()).WrappedPreBlocker(inner)(ctx, req)
	require.ErrorIs(t, err, store)
	require.True(t, strings.HasPrefix(err.Error(), "circuit breaker step: "), "%v", err)
}
