//go:build lying

package app

import (
	"context"
	"errors"
	"slices"
	"testing"

	"cosmossdk.io/log/v2"
	abci "github.com/cometbft/cometbft/abci/types"
	sdk "github.com/cosmos/cosmos-sdk/types"

	"github.com/inferenced/inferenced/abci/ve"
	"github.com/inferenced/inferenced/x/inference/service"
	"github.com/inferenced/inferenced/x/inference/verdict"
)

// lieGroup is the chain's view the liar and the honest handlers read: a
// group of n for epoch, and a verdict reference (nil: none).
type lieGroup struct {
	epoch uint64
	n     int
	ref   []byte
}

func (g lieGroup) VoteGroup(context.Context, int64) (uint64, int, error) { return g.epoch, g.n, nil }
func (g lieGroup) VerdictReference(context.Context, int64, uint64, int) ([]byte, error) {
	return g.ref, nil
}

// lieMonitor is an honest monitor that sees every member ok at 0%.
type lieMonitor struct{}

func (lieMonitor) Snapshot(_ uint64, n int) ([]verdict.Verdict, error) {
	vs := make([]verdict.Verdict, n)
	for i := range vs {
		vs[i] = verdict.OK
	}
	return vs, nil
}

func (lieMonitor) Service(_ uint64, n int) ([]service.Report, error) {
	return make([]service.Report, n), nil
}

// abciVerify is the honest handler as CometBFT reaches it (BaseApp's
// method, without its store): req at its height against g.
func abciVerify(h ve.Handler) verifyFunc {
	return func(req *abci.RequestVerifyVoteExtension) (*abci.ResponseVerifyVoteExtension, error) {
		return h.VerifyVoteExtension()(sdk.Context{}, req)
	}
}

// The modes whose extensions an honest VerifyVoteExtension refuses: the
// liar's precommits carrying them are invalid for every other validator.
var refusedModes = []string{LieGarbage, LieOversized, LieWrongEpoch, LieServiceGarbage}

// Attack covered: a Byzantine validator signing garbage, oversized,
// wrong-epoch or undecodable-service extensions. Under CometBFT v0.40 a
// node whose VerifyVoteExtension refuses its own extension panics; the
// lying build must instead sign every lie (its own check accepts it, as
// CometBFT does right after ExtendVote) and leave the refusing to the
// honest validators, which refuse exactly the garbage modes. Nothing
// panics and no handler returns an error.
func TestLyingValidatorSignsWhatOthersRefuse(t *testing.T) {
	ref, err := verdict.Pack([]verdict.Verdict{verdict.Miss, verdict.OK, verdict.OK, verdict.Unknown, verdict.OK})
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range []lieGroup{{epoch: 7, n: 5}, {epoch: 7, n: 5, ref: ref}, {epoch: 1 << 40, n: 1000}} {
		honest := ve.NewHandler(g, lieMonitor{}, log.NewNopLogger())
		for _, mode := range []string{LieAllMiss, LieAllOK, LieGarbage, LieOversized, LieWrongEpoch,
			LieServiceMax, LieServiceZero, LieServiceGarbage, LieServiceTarget, LieServiceTarget + ":3"} {
			l := &liar{groups: g}
			l.mode.Store(mode)
			extend, verify, others := l.extendVote(honest.ExtendVote()), l.verify(abciVerify(honest)), abciVerify(honest)
			for _, height := range []int64{10, 11} {
				rsp, err := extend(sdk.Context{}, &abci.RequestExtendVote{Height: height})
				if err != nil || len(rsp.VoteExtension) == 0 {
					t.Fatalf("n=%d %s: ExtendVote %v, %v: the lie was not made", g.n, mode, rsp, err)
				}
				req := &abci.RequestVerifyVoteExtension{Height: height, VoteExtension: rsp.VoteExtension}
				if got := verifyStatus(t, verify, req); got != abci.ResponseVerifyVoteExtension_ACCEPT {
					t.Errorf("n=%d %s: the liar's own check %s its lie: CometBFT v0.40 would panic its node", g.n, mode, got)
				}
				want := abci.ResponseVerifyVoteExtension_ACCEPT
				if slices.Contains(refusedModes, mode) {
					want = abci.ResponseVerifyVoteExtension_REJECT
				}
				if got := verifyStatus(t, others, req); got != want {
					t.Errorf("n=%d %s: an honest validator %s the lie, want %s", g.n, mode, got, want)
				}
			}
		}
	}
}

// The exception is the liar's own last lie and nothing else: the same
// bytes at another height (a replay), other garbage at the same height,
// and another validator's refused extension get the honest answer.
func TestLyingValidatorAcceptsOnlyItsOwnLastLie(t *testing.T) {
	g := lieGroup{epoch: 7, n: 5}
	honest := ve.NewHandler(g, lieMonitor{}, log.NewNopLogger())
	l := &liar{groups: g}
	l.mode.Store(LieGarbage)
	verify := l.verify(abciVerify(honest))
	if got := verifyStatus(t, verify, &abci.RequestVerifyVoteExtension{Height: 10, VoteExtension: []byte("\x0a\xffnot a vote extension")}); got != abci.ResponseVerifyVoteExtension_REJECT {
		t.Fatalf("before any lie: %s, want the honest refusal", got)
	}
	rsp, err := l.extendVote(honest.ExtendVote())(sdk.Context{}, &abci.RequestExtendVote{Height: 10})
	if err != nil {
		t.Fatal(err)
	}
	lie := rsp.VoteExtension
	for name, req := range map[string]*abci.RequestVerifyVoteExtension{
		"replayed at the next height":    {Height: 11, VoteExtension: lie},
		"replayed at the previous":       {Height: 9, VoteExtension: lie},
		"other garbage at the height":    {Height: 10, VoteExtension: append(slices.Clone(lie), 0x00)},
		"another validator's oversized":  {Height: 10, VoteExtension: make([]byte, ve.MaxSize(5)+1)},
		"a prefix of the lie":            {Height: 10, VoteExtension: lie[:len(lie)-1]},
		"from another validator, bogus":  {Height: 10, VoteExtension: []byte{0xde, 0xad}, ValidatorAddress: []byte("other")},
		"the lie made at another height": {Height: 12, VoteExtension: lie},
	} {
		if got := verifyStatus(t, verify, req); got != abci.ResponseVerifyVoteExtension_REJECT {
			t.Errorf("%s: %s, want the honest refusal", name, got)
		}
	}
	// A new lie replaces the last one: the liar turned honest signs an
	// honest extension, and its old lie is refused again.
	l.mode.Store("")
	rsp, err = l.extendVote(honest.ExtendVote())(sdk.Context{}, &abci.RequestExtendVote{Height: 10})
	if err != nil {
		t.Fatal(err)
	}
	if got := verifyStatus(t, verify, &abci.RequestVerifyVoteExtension{Height: 10, VoteExtension: rsp.VoteExtension}); got != abci.ResponseVerifyVoteExtension_ACCEPT {
		t.Errorf("honest extension: %s", got)
	}
	if got := verifyStatus(t, verify, &abci.RequestVerifyVoteExtension{Height: 10, VoteExtension: lie}); got != abci.ResponseVerifyVoteExtension_REJECT {
		t.Errorf("the old lie after an honest extension: %s, want the honest refusal", got)
	}
}

// A liar that cannot read the group, or whose honest handler fails, falls
// back to the honest answer and does not panic; the App's check of its
// own last lie is found through the App (lyingVerify).
func TestLyingVerifyIsFoundThroughTheApp(t *testing.T) {
	a := &App{}
	honestReject := func(*abci.RequestVerifyVoteExtension) (*abci.ResponseVerifyVoteExtension, error) {
		return &abci.ResponseVerifyVoteExtension{Status: abci.ResponseVerifyVoteExtension_REJECT}, nil
	}
	req := &abci.RequestVerifyVoteExtension{Height: 3, VoteExtension: []byte("lie")}
	if got := verifyStatus(t, a.lyingVerify(honestReject), req); got != abci.ResponseVerifyVoteExtension_REJECT {
		t.Fatalf("an App that does not lie: %s", got)
	}
	l := &liar{groups: lieGroup{epoch: 1, n: 1}}
	l.last.Store(&ownLie{height: 3, bz: []byte("lie")})
	liars.Store(a, l)
	t.Cleanup(func() { liars.Delete(a) })
	if got := verifyStatus(t, a.lyingVerify(honestReject), req); got != abci.ResponseVerifyVoteExtension_ACCEPT {
		t.Fatalf("the lying App's own last lie: %s", got)
	}
	if got := verifyStatus(t, (&App{}).lyingVerify(honestReject), req); got != abci.ResponseVerifyVoteExtension_REJECT {
		t.Fatalf("another App accepted this one's lie: %s", got)
	}
	failing := func(sdk.Context, *abci.RequestExtendVote) (*abci.ResponseExtendVote, error) {
		return nil, errors.New("store")
	}
	for _, mode := range []string{LieServiceMax, LieGarbage} {
		l := &liar{groups: lieGroup{epoch: 1, n: 0}}
		l.mode.Store(mode)
		if _, err := l.extendVote(failing)(sdk.Context{}, &abci.RequestExtendVote{Height: 3}); err == nil {
			t.Errorf("%s on an empty group: the honest handler's error was lost", mode)
		}
		if l.last.Load() != nil {
			t.Errorf("%s: a failed ExtendVote was recorded as a lie", mode)
		}
	}
}

func verifyStatus(t *testing.T, verify verifyFunc, req *abci.RequestVerifyVoteExtension) abci.ResponseVerifyVoteExtension_VerifyStatus {
	t.Helper()
	rsp, err := verify(req)
	if err != nil {
		t.Fatalf("VerifyVoteExtension returned an error: %v", err)
	}
	return rsp.Status
}
