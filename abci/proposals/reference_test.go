package proposals

import (
	"testing"

	"cosmossdk.io/log/v2"
	abci "github.com/cometbft/cometbft/abci/types"
	sdk "github.com/cosmos/cosmos-sdk/types"

	"github.com/inferenced/inferenced/abci/internal/testcommit"
	"github.com/inferenced/inferenced/abci/ve"
	"github.com/inferenced/inferenced/x/inference/aggregate"
	"github.com/inferenced/inferenced/x/inference/types"
	"github.com/inferenced/inferenced/x/inference/verdict"
)

// TestBundleSamplesAreAbsoluteAgainstTheReference: the chain attested
// executor 0 missed and executor 1 ok; validators send their verdicts
// relative to that (ExtendVote): the three largest agree with it and send
// no verdict at all, the smallest sees executor 1 unknown. The proposer's
// bundle carries the absolute samples (miss, ok), and ProcessProposal
// accepts it. Attacks named: a proposer that tallies the relative lists
// as if they were absolute (samples ok, ok), and a validator set whose
// state holds another reference, both refused because the samples do
// not follow.
func TestBundleSamplesAreAbsoluteAgainstTheReference(t *testing.T) {
	const ok, miss, unknown = verdict.OK, verdict.Miss, verdict.Unknown
	ref, err := verdict.Pack([]verdict.Verdict{miss, ok})
	if err != nil {
		t.Fatal(err)
	}
	vals := validators()
	ec := testcommit.Commit(t, testChain, testHeight, testRound, vals, func(i int) []byte {
		seen := []verdict.Verdict{miss, ok}
		if i == 3 {
			seen[1] = unknown
		}
		packed, err := verdict.Pack(seen)
		if err != nil {
			t.Fatal(err)
		}
		rel, err := verdict.Relative(packed, ref, 2)
		if err != nil {
			t.Fatal(err)
		}
		ext, err := ve.Encode(types.HealthVoteExtension{EpochIndex: 3, Verdicts: rel}, 2)
		if err != nil {
			t.Fatal(err)
		}
		return ext
	})
	last := CommitInfoOf(ec)
	handler := func(ref []byte) Handler {
		r := &recorder{}
		return NewHandler(r.prepare, r.process, group{epoch: 3, n: 2, ref: ref},
			func(sdk.Context) KeyLookup { return keysOf(vals) }, v3From(1), log.NewNopLogger())
	}
	h := handler(ref)
	resp, err := h.PrepareProposal()(enabledCtx(2), &abci.RequestPrepareProposal{Height: testHeight + 1, MaxTxBytes: 10_000, LocalLastCommit: ec})
	if err != nil {
		t.Fatal(err)
	}
	b, err := Decode(resp.Txs[0])
	if err != nil {
		t.Fatal(err)
	}
	got, err := verdict.Unpack(b.Samples, 2)
	if err != nil || got[0] != miss || got[1] != ok {
		t.Fatalf("samples %v (%v), want the absolute [miss ok]", got, err)
	}
	for _, v := range mustCommit(t, b, last).Votes[:3] {
		if len(v.VoteExtension) != 2 { // the epoch alone: tag and varint
			t.Fatalf("an agreeing validator sent %x, want its epoch alone", v.VoteExtension)
		}
	}
	if process(t, h, resp.Txs, last) != abci.ResponseProcessProposal_ACCEPT {
		t.Fatal("own proposal rejected")
	}

	// A proposer that ignores the reference.
	signed, err := Check(mustCommit(t, b, last), last, testChain, testHeight, keysOf(vals), ve.NewChecker(enabledCtx(2), group{epoch: 3, n: 2}, testHeight).Check)
	if err != nil {
		t.Fatal(err)
	}
	asIf, err := aggregate.Packed(signed.Votes, 2)
	if err != nil {
		t.Fatal(err)
	}
	forged := b
	forged.Samples = asIf
	bz, err := Encode(forged)
	if err != nil {
		t.Fatal(err)
	}
	if process(t, h, [][]byte{bz}, last) != abci.ResponseProcessProposal_REJECT {
		t.Fatal("samples tallied without the reference accepted")
	}
	// Validators whose state holds another reference.
	other, err := verdict.Pack([]verdict.Verdict{ok, ok})
	if err != nil {
		t.Fatal(err)
	}
	if process(t, handler(other), resp.Txs, last) != abci.ResponseProcessProposal_REJECT {
		t.Fatal("a bundle tallied against another reference accepted")
	}
}

func mustCommit(t *testing.T, b Bundle, last abci.CommitInfo) abci.ExtendedCommitInfo {
	t.Helper()
	ec, err := b.Commit(last)
	if err != nil {
		t.Fatal(err)
	}
	return ec
}
