package proposals

import (
	"context"
	"errors"
	"strings"
	"testing"

	abci "github.com/cometbft/cometbft/abci/types"
	cmtproto "github.com/cometbft/cometbft/proto/tendermint/types"
	cmttypes "github.com/cometbft/cometbft/types"

	"cosmossdk.io/log/v2"
	sdk "github.com/cosmos/cosmos-sdk/types"

	"github.com/inferenced/inferenced/abci/internal/testcommit"
	"github.com/inferenced/inferenced/abci/ve"
	"github.com/inferenced/inferenced/x/inference/service"
	"github.com/inferenced/inferenced/x/inference/types"
	"github.com/inferenced/inferenced/x/inference/verdict"
)

type group struct {
	epoch uint64
	n     int
	ref   []byte // the verdict reference: nil, none
}

func (g group) VoteGroup(context.Context, int64) (uint64, int, error) { return g.epoch, g.n, nil }

func (g group) VerdictReference(context.Context, int64, uint64, int) ([]byte, error) {
	return g.ref, nil
}

// recorder is an inner handler pair that records what it was given.
type recorder struct {
	prepared  *abci.RequestPrepareProposal
	processed *abci.RequestProcessProposal
}

func (r *recorder) prepare(_ sdk.Context, req *abci.RequestPrepareProposal) (*abci.ResponsePrepareProposal, error) {
	r.prepared = req
	return &abci.ResponsePrepareProposal{Txs: req.Txs}, nil
}

func (r *recorder) process(_ sdk.Context, req *abci.RequestProcessProposal) (*abci.ResponseProcessProposal, error) {
	r.processed = req
	return &abci.ResponseProcessProposal{Status: abci.ResponseProcessProposal_ACCEPT}, nil
}

func enabledCtx(enable int64) sdk.Context {
	return sdk.Context{}.WithChainID(testChain).WithConsensusParams(cmtproto.ConsensusParams{
		Abci: &cmtproto.ABCIParams{VoteExtensionsEnableHeight: enable},
	}).WithLogger(log.NewNopLogger())
}

// healthCommit: all four validators sign a real extension for epoch 3 over
// two executors: everyone says executor 0 missed; executor 1 is ok for the
// two largest only (70 of 100).
func healthCommit(t *testing.T, vals []testcommit.Validator) abci.ExtendedCommitInfo {
	t.Helper()
	return testcommit.Commit(t, testChain, testHeight, testRound, vals, func(i int) []byte {
		second := verdict.Unknown
		if i < 2 {
			second = verdict.OK
		}
		packed, err := verdict.Pack([]verdict.Verdict{verdict.Miss, second})
		if err != nil {
			t.Fatal(err)
		}
		// Validator i saw executor 0 fail 10*i% of its canaries.
		rates, err := service.Encode([]service.Report{service.Report(10 * i), 0})
		if err != nil {
			t.Fatal(err)
		}
		ext, err := ve.Encode(types.HealthVoteExtension{EpochIndex: 3, Verdicts: packed, Service: rates}, 2)
		if err != nil {
			t.Fatal(err)
		}
		return ext
	})
}

// newTestHandler is a handler over a group of two in epoch 3 whose
// blocks carry HEALTH3 (the switch at height 1, as a new chain's).
func newTestHandler(vals []testcommit.Validator, r *recorder) Handler {
	return NewHandler(r.prepare, r.process, group{epoch: 3, n: 2},
		func(sdk.Context) KeyLookup { return keysOf(vals) }, v3From(1), log.NewNopLogger())
}

func TestPrepareInjectsBundleAndProcessAcceptsIt(t *testing.T) {
	vals := validators()
	r := &recorder{}
	h := newTestHandler(vals, r)
	ctx := enabledCtx(2)
	ec := healthCommit(t, vals)
	user := []byte{0x0a, 0x01, 0x00}
	resp, err := h.PrepareProposal()(ctx, &abci.RequestPrepareProposal{
		Height: testHeight + 1, MaxTxBytes: 10_000, Txs: [][]byte{user}, LocalLastCommit: ec,
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Txs) != 2 || !IsBundle(resp.Txs[0]) || string(resp.Txs[1]) != string(user) {
		t.Fatalf("proposal txs %x", resp.Txs)
	}
	// CometBFT counts each transaction with its protobuf tag and length
	// prefix; the inner handler must get only what is left after that.
	if want := 10_000 - cmttypes.ComputeProtoSizeForTxs([]cmttypes.Tx{resp.Txs[0]}); r.prepared.MaxTxBytes != want ||
		want >= 10_000-int64(len(resp.Txs[0])) {
		t.Fatalf("inner handler got MaxTxBytes %d, want %d", r.prepared.MaxTxBytes, want)
	}
	b, err := Decode(resp.Txs[0])
	if err != nil {
		t.Fatal(err)
	}
	vs, err := verdict.Unpack(b.Samples, 2)
	if err != nil || vs[0] != verdict.Miss || vs[1] != verdict.OK || b.Epoch != 3 {
		t.Fatalf("samples %v (%v), epoch %d", vs, err, b.Epoch)
	}
	// Four validators of equal power saw 0, 10, 20 and 30%: the lower median.
	rates, err := service.Decode(b.Service, 2)
	if err != nil || rates[0] != 10 || rates[1] != 0 {
		t.Fatalf("service rates %v (%v), want [10%% 0%%]", rates, err)
	}
	status := process(t, h, resp.Txs, CommitInfoOf(ec))
	if status != abci.ResponseProcessProposal_ACCEPT {
		t.Fatal("own proposal rejected")
	}
	if len(r.processed.Txs) != 1 || string(r.processed.Txs[0]) != string(user) {
		t.Fatalf("inner process handler got %x, want the user tx only", r.processed.Txs)
	}
}

func process(t *testing.T, h Handler, txs [][]byte, last abci.CommitInfo) abci.ResponseProcessProposal_ProposalStatus {
	t.Helper()
	resp, err := h.ProcessProposal()(enabledCtx(2), &abci.RequestProcessProposal{
		Height: testHeight + 1, Txs: txs, ProposedLastCommit: last,
	})
	if err != nil {
		t.Fatal(err)
	}
	return resp.Status
}

// One named case per attack by a proposer on the bundle, in the form
// {name, build, wantErr}: each builds its proposal from the honest one
// (failing the test if a builder fails) and must be refused for its own
// reason, not merely refused.
func TestProcessRejectsProposerAttacks(t *testing.T) {
	vals := validators()
	h := newTestHandler(vals, &recorder{})
	ec := healthCommit(t, vals)
	last := CommitInfoOf(ec)
	resp, err := h.PrepareProposal()(enabledCtx(2), &abci.RequestPrepareProposal{
		Height: testHeight + 1, MaxTxBytes: 10_000, LocalLastCommit: ec,
	})
	if err != nil {
		t.Fatal(err)
	}
	honest := resp.Txs[0]
	b, err := Decode(honest)
	if err != nil {
		t.Fatal(err)
	}
	user := []byte{0x0a, 0x01, 0x00}
	encode := func(t *testing.T, x Bundle) []byte {
		t.Helper()
		bz, err := Encode(x)
		if err != nil {
			t.Fatal(err)
		}
		return bz
	}
	// edited is b with its fields changed by edit.
	edited := func(edit func(*Bundle)) func(t *testing.T) [][]byte {
		return func(t *testing.T) [][]byte {
			x := b
			edit(&x)
			return [][]byte{encode(t, x)}
		}
	}
	// rebundled is b with the votes it carries changed by edit.
	rebundled := func(edit func(votes []abci.ExtendedVoteInfo) []abci.ExtendedVoteInfo) func(t *testing.T) [][]byte {
		return func(t *testing.T) [][]byte {
			carried, err := b.Commit(last)
			if err != nil {
				t.Fatal(err)
			}
			carried.Votes = edit(carried.Votes)
			nb, err := NewBundle(b.Layout, carried, b.Epoch, b.Members, b.Samples, b.Service)
			if err != nil {
				t.Fatal(err)
			}
			return [][]byte{encode(t, nb)}
		}
	}
	txs := func(txs ...[]byte) func(*testing.T) [][]byte { return func(*testing.T) [][]byte { return txs } }
	cases := []struct {
		name    string
		build   func(t *testing.T) [][]byte
		wantErr string
	}{
		{"proposer omits the bundle", txs(user), errNoBundle.Error()},
		{"empty proposal", txs(), errNoBundle.Error()},
		{"proposer moves the bundle", txs(user, honest), errNoBundle.Error()},
		{"proposer duplicates the bundle", txs(honest, honest), errMisplacedBundle.Error()},
		{"proposer forges the samples", edited(func(x *Bundle) { x.Samples = []byte{0x05} }), // executor 0 ok, executor 1 ok
			"samples do not follow from the commit"},
		{"proposer forges the service rates", edited(func(x *Bundle) { x.Service = []byte{0, 0, 50} }), // executor 0 at 50%
			"service rates do not follow from the commit"},
		{"proposer drops the service rates", edited(func(x *Bundle) { x.Service = nil }),
			"service rates do not follow from the commit"},
		{"proposer claims another epoch", edited(func(x *Bundle) { x.Epoch = 4 }), "bundle for epoch 4 of 2 members"},
		{"proposer claims another group size", edited(func(x *Bundle) { x.Members, x.Samples = 3, []byte{0x06} }), // miss, ok, unknown
			"bundle for epoch 3 of 3 members"},
		{"proposer copies an extension to another validator", rebundled(func(v []abci.ExtendedVoteInfo) []abci.ExtendedVoteInfo {
			v[3].VoteExtension = append([]byte{}, v[0].VoteExtension...)
			return v
		}), "vote 3: validator"},
		{"proposer swaps extensions between validators", rebundled(func(v []abci.ExtendedVoteInfo) []abci.ExtendedVoteInfo {
			v[1].VoteExtension, v[2].VoteExtension = v[2].VoteExtension, v[1].VoteExtension
			return v
		}), "bad extension signature"},
		{"proposer reorders the votes", rebundled(func(v []abci.ExtendedVoteInfo) []abci.ExtendedVoteInfo {
			v[0], v[1] = v[1], v[0]
			return v
		}), "vote 0: validator"}, // the carried pairs follow the last commit's order: vote 0 is checked under its own key

		{"proposer drops a signature", rebundled(func(v []abci.ExtendedVoteInfo) []abci.ExtendedVoteInfo {
			v[2].ExtensionSignature = nil
			return v
		}), "vote 2: no extension signature"},
		{"proposer adds a vote", rebundled(func(v []abci.ExtendedVoteInfo) []abci.ExtendedVoteInfo { return append(v, v[0]) }),
			"after the last entry"},
		{"proposer sends a decompression bomb", edited(func(x *Bundle) {
			x.extensions = zstdStream(t, make([]byte, 8<<20), 1<<10)
		}), ErrInflateCap.Error()},
		// Only the bundle with nothing in it may skip verification: epoch 0
		// with votes carried is not the empty bundle.
		{"proposer passes a bundle with votes off as empty (epoch 0)", edited(func(x *Bundle) { x.Epoch = 0 }),
			"bundle for epoch 0 of 2 members"},
		{"proposer prunes honest extensions below 2/3", rebundled(func(v []abci.ExtendedVoteInfo) []abci.ExtendedVoteInfo {
			v[0].VoteExtension, v[0].ExtensionSignature = nil, nil
			return v
		}), "need more than 2/3"},
		{"garbage behind the prefix", txs(append(append([]byte{}, prefixV3...), 0xff)), ErrBadBundle.Error()},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			proposal := c.build(t)
			_, _, err := h.checkBundle(enabledCtx(2), &abci.RequestProcessProposal{
				Height: testHeight + 1, Txs: proposal, ProposedLastCommit: last,
			})
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Fatalf("err %v, want %q", err, c.wantErr)
			}
			if got := process(t, h, proposal, last); got != abci.ResponseProcessProposal_REJECT {
				t.Fatalf("status %s", got)
			}
		})
	}
	if got := process(t, h, [][]byte{emptyBundle(LayoutV3), user}, last); got != abci.ResponseProcessProposal_ACCEPT {
		t.Errorf("a proposer may withhold attestations with an empty bundle: %s", got)
	}
}

func TestDisabledExtensionsMeanNoBundle(t *testing.T) {
	vals := validators()
	r := &recorder{}
	h := newTestHandler(vals, r)
	ctx := enabledCtx(0)
	user := []byte{0x0a, 0x01, 0x00}
	resp, err := h.PrepareProposal()(ctx, &abci.RequestPrepareProposal{Height: 10, MaxTxBytes: 100, Txs: [][]byte{user}})
	if err != nil || len(resp.Txs) != 1 || IsBundle(resp.Txs[0]) {
		t.Fatalf("%x %v", resp.Txs, err)
	}
	for _, txs := range [][][]byte{{emptyBundle(LayoutV3)}, {user, emptyBundle(LayoutV3)}, {emptyBundle(LayoutV2)}} {
		st, err := h.ProcessProposal()(ctx, &abci.RequestProcessProposal{Height: 10, Txs: txs})
		if err != nil || st.Status != abci.ResponseProcessProposal_REJECT {
			t.Errorf("a bundle with extensions disabled: %v %v", st, err)
		}
	}
	st, err := h.ProcessProposal()(ctx, &abci.RequestProcessProposal{Height: 10, Txs: [][]byte{user}})
	if err != nil || st.Status != abci.ResponseProcessProposal_ACCEPT {
		t.Errorf("plain proposal: %v %v", st, err)
	}
}

// At the enable height itself the proposal carries no extensions yet.
func TestEnableHeightBoundary(t *testing.T) {
	if ExtensionsEnabled(enabledCtx(5), 5) || !ExtensionsEnabled(enabledCtx(5), 6) || ExtensionsEnabled(enabledCtx(0), 100) {
		t.Fatal("extensions are in proposals from enable height + 1")
	}
}

// A proposer that cannot reach 2/3 valid extensions proposes an empty bundle
// rather than no block.
func TestPrepareFallsBackToAnEmptyBundle(t *testing.T) {
	vals := validators()
	r := &recorder{}
	h := NewHandler(r.prepare, r.process, group{epoch: 3, n: 2},
		func(sdk.Context) KeyLookup { return keysOf(vals[3:]) }, v3From(1), log.NewNopLogger())
	resp, err := h.PrepareProposal()(enabledCtx(2), &abci.RequestPrepareProposal{
		Height: testHeight + 1, MaxTxBytes: 10_000, LocalLastCommit: healthCommit(t, vals),
	})
	if err != nil {
		t.Fatal(err)
	}
	b, err := Decode(resp.Txs[0])
	if err != nil || !isEmpty(b) || b.Layout != LayoutV3 {
		t.Fatalf("bundle %+v %v", b, err)
	}
}

// A failing inner handler (or a panic) must not leave the block without its
// bundle: every validator would reject it.
func TestPrepareProposesTheBundleAloneWhenTheInnerHandlerFails(t *testing.T) {
	vals := validators()
	failing := func(sdk.Context, *abci.RequestPrepareProposal) (*abci.ResponsePrepareProposal, error) {
		return nil, errors.New("mempool broke")
	}
	panicking := func(sdk.Context, *abci.RequestPrepareProposal) (*abci.ResponsePrepareProposal, error) {
		panic("mempool bug")
	}
	for name, inner := range map[string]sdk.PrepareProposalHandler{"error": failing, "panic": panicking} {
		r := &recorder{}
		h := NewHandler(inner, r.process, group{epoch: 3, n: 2}, func(sdk.Context) KeyLookup { return keysOf(vals) }, v3From(1), log.NewNopLogger())
		resp, err := h.PrepareProposal()(enabledCtx(2), &abci.RequestPrepareProposal{
			Height: testHeight + 1, MaxTxBytes: 10_000, LocalLastCommit: healthCommit(t, vals),
		})
		if err != nil || len(resp.Txs) != 1 || !IsBundle(resp.Txs[0]) {
			t.Fatalf("%s: %x %v", name, resp.Txs, err)
		}
		if process(t, h, resp.Txs, CommitInfoOf(healthCommit(t, vals))) != abci.ResponseProcessProposal_ACCEPT {
			t.Fatalf("%s: the bundle alone is rejected", name)
		}
	}
}
