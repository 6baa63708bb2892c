package preblock_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	abci "github.com/cometbft/cometbft/abci/types"
	cmtproto "github.com/cometbft/cometbft/proto/tendermint/types"
	"github.com/stretchr/testify/require"

	"cosmossdk.io/log"
	"cosmossdk.io/math"
	sdk "github.com/cosmos/cosmos-sdk/types"

	"github.com/inferenced/inferenced/abci/preblock"
	"github.com/inferenced/inferenced/abci/proposals"
	"github.com/inferenced/inferenced/x/inference/keeper"
	"github.com/inferenced/inferenced/x/inference/keeper/keepertest"
	"github.com/inferenced/inferenced/x/inference/types"
	"github.com/inferenced/inferenced/x/inference/verdict"
)

// breakerParams are x/inference's breaker test params (no PoC phase,
// inferences expire after one block, cooldowns 5 doubling up to 20, an SPRT
// threshold so high that only the breaker acts), with no exclusion cap.
func breakerParams() types.Params {
	p := types.DefaultParams()
	p.EpochLength = 200
	p.PocPhaseBlocks = 0
	p.ExpirationBlocks = 1
	p.HealthCbInitialCooldownBlocks = 5
	p.HealthCbMaxCooldownBlocks = 20
	p.DowntimeHThreshold = math.LegacyMustNewDecFromStr("1000")
	p.HealthCbMaxExcludedWeightPct = 100
	return p
}

// recordingBreaker is the real keeper, recording what the pre-blocker asks
// of it; applyErr, if set, fails ApplyHealth.
type recordingBreaker struct {
	keeper        keeper.Keeper
	attestedCalls int
	applied       [][]keeper.AttestedSample
	applyErr      error
}

func (r *recordingBreaker) AttestedSamples(ctx context.Context, epoch uint64, packed []byte) ([]keeper.AttestedSample, error) {
	r.attestedCalls++
	return r.keeper.AttestedSamples(ctx, epoch, packed)
}

func (r *recordingBreaker) ApplyHealth(ctx context.Context, attested []keeper.AttestedSample) error {
	r.applied = append(r.applied, attested)
	if r.applyErr != nil {
		return r.applyErr
	}
	return r.keeper.ApplyHealth(ctx, attested)
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

func bundle(t *testing.T, epoch uint64, vs ...verdict.Verdict) []byte {
	t.Helper()
	packed, err := verdict.Pack(vs)
	require.NoError(t, err)
	bz, err := proposals.Encode(proposals.Bundle{Epoch: epoch, Members: len(vs), Samples: packed})
	require.NoError(t, err)
	return bz
}

// One case per kind of block the pre-blocker meets: what it asks the keeper
// and what it hands the breaker's step.
func TestPreBlockerAppliesTheBundleOfEachBlock(t *testing.T) {
	const height = 3
	k, base, addrs := keepertest.Network(t, 4, breakerParams(), nil)
	epoch, n, err := k.VoteGroup(base, height-1)
	require.NoError(t, err)
	require.Equal(t, 4, n)
	good := bundle(t, epoch, verdict.Miss, verdict.OK, verdict.Unknown, verdict.Unknown)
	empty, err := proposals.Encode(proposals.Bundle{})
	require.NoError(t, err)
	user := []byte{0x0a, 0x01, 0x00}
	cases := []struct {
		name        string
		enable      int64 // vote_extensions_enable_height
		txs         [][]byte
		wantAsked   bool // AttestedSamples is called
		wantApplied []keeper.AttestedSample
		wantError   string // logged at Error
	}{
		{name: "extensions off", enable: 0, txs: [][]byte{good, user}},
		{name: "no transactions", enable: 2},
		{name: "no bundle", enable: 2, txs: [][]byte{user}},
		{name: "undecodable bundle", enable: 2, txs: [][]byte{append(slices.Clone(empty), 0xff)},
			wantError: "undecodable health bundle in a decided block"},
		{name: "bundle that does not fit the group", enable: 2, txs: [][]byte{bundle(t, epoch, verdict.Miss, verdict.OK, verdict.OK, verdict.OK, verdict.OK)},
			wantAsked: true, wantError: "health bundle does not fit the epoch group"},
		{name: "bundle for another epoch", enable: 2, txs: [][]byte{bundle(t, epoch+1, verdict.Miss, verdict.OK, verdict.OK, verdict.OK)},
			wantAsked: true},
		{name: "empty bundle (attestations withheld)", enable: 2, txs: [][]byte{empty}, wantAsked: true},
		{name: "good bundle", enable: 2, txs: [][]byte{good, user}, wantAsked: true,
			wantApplied: []keeper.AttestedSample{{Executor: addrs[0], Miss: true}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var logged []string
			ctx, _ := base.WithBlockHeight(height).WithLogger(errorLog{Logger: log.NewNopLogger(), errors: &logged}).
				WithConsensusParams(cmtproto.ConsensusParams{Abci: &cmtproto.ABCIParams{VoteExtensionsEnableHeight: c.enable}}).
				CacheContext()
			r := &recordingBreaker{keeper: k}
			rsp, err := preblock.NewHandler(r).WrappedPreBlocker(inner)(ctx, &abci.RequestFinalizeBlock{Height: height, Txs: c.txs})
			require.NoError(t, err)
			require.True(t, rsp.ConsensusParamsChanged, "the modules' response is returned")
			require.Equal(t, c.wantAsked, r.attestedCalls == 1, "AttestedSamples called %d times", r.attestedCalls)
			require.Len(t, r.applied, 1, "ApplyHealth runs once in every block")
			require.Equal(t, c.wantApplied, r.applied[0])
			if c.wantError == "" {
				require.Empty(t, logged)
			} else {
				require.Equal(t, []string{c.wantError}, logged)
			}
		})
	}
}

func TestPreBlockerPropagatesErrors(t *testing.T) {
	k, ctx, _ := keepertest.Network(t, 4, breakerParams(), nil)
	ctx = ctx.WithBlockHeight(3)
	req := &abci.RequestFinalizeBlock{Height: 3}

	broken := errors.New("upgrade pre-blocker failed")
	r := &recordingBreaker{keeper: k}
	_, err := preblock.NewHandler(r).WrappedPreBlocker(modules(func(sdk.Context) (*sdk.ResponsePreBlock, error) {
		return nil, broken
	}))(ctx, req)
	require.ErrorIs(t, err, broken)
	require.Empty(t, r.applied, "no breaker step after a failed module pre-blocker")

	store := errors.New("store")
	r = &recordingBreaker{keeper: k, applyErr: store}
	_, err = preblock.NewHandler(r).WrappedPreBlocker(inner)(ctx, req)
	require.ErrorIs(t, err, store)
	require.True(t, strings.HasPrefix(err.Error(), "circuit breaker step: "), "%v", err)
}
