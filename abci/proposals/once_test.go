package proposals

import (
	"testing"

	abci "github.com/cometbft/cometbft/abci/types"
	cmtcrypto "github.com/cometbft/cometbft/crypto"

	"cosmossdk.io/log/v2"
	sdk "github.com/cosmos/cosmos-sdk/types"
)

// countingKey counts the signatures verified with it.
type countingKey struct {
	cmtcrypto.PubKey
	verified *int
}

func (k countingKey) VerifySignature(msg, sig []byte) bool {
	*k.verified++
	return k.PubKey.VerifySignature(msg, sig)
}

func countingKeys(keys KeyLookup, verified *int) KeySource {
	return func(sdk.Context) KeyLookup {
		return func(addr []byte) (cmtcrypto.PubKey, error) {
			k, err := keys(addr)
			if err != nil {
				return nil, err
			}
			return countingKey{PubKey: k, verified: verified}, nil
		}
	}
}

// Each piece of consensus work once per block: the proposer verifies each
// extension signature once (it prunes and checks in one pass), and a
// validator checking the proposal verifies each once too.
func TestEachExtensionSignatureIsVerifiedOnce(t *testing.T) {
	vals := validators()
	ec := healthCommit(t, vals)
	// One validator's extension is forged: pruned, after one verification.
	ec.Votes[3].ExtensionSignature = vals[0].Sign(t, testChain, testHeight, testRound, ec.Votes[3].VoteExtension)
	verified := 0
	r := &recorder{}
	h := NewHandler(r.prepare, r.process, group{epoch: 3, n: 2}, countingKeys(keysOf(vals), &verified), v3From(1), log.NewNopLogger())
	resp, err := h.PrepareProposal()(enabledCtx(2), &abci.RequestPrepareProposal{
		Height: testHeight + 1, MaxTxBytes: 10_000, LocalLastCommit: ec,
	})
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := Decode(resp.Txs[0]); b.Empty() {
		t.Fatal("the proposer sent the empty bundle")
	}
	if verified != len(ec.Votes) {
		t.Fatalf("the proposer verified %d signatures for %d signed extensions", verified, len(ec.Votes))
	}
	verified = 0
	if process(t, h, resp.Txs, CommitInfoOf(ec)) != abci.ResponseProcessProposal_ACCEPT {
		t.Fatal("proposal rejected")
	}
	if want := len(ec.Votes) - 1; verified != want {
		t.Fatalf("a validator verified %d signatures for the %d extensions the bundle carries", verified, want)
	}
}

// A node decodes a block's bundle once: the pre-blocker reuses what
// ProcessProposal accepted, for exactly the same bytes only; a node that did
// not process the proposal (block sync, replay, a restart, another round's
// proposal) decodes it itself, and gets what decoding gives.
func TestAcceptedIsReusedOnlyForTheSameBytes(t *testing.T) {
	vals := validators()
	ec := healthCommit(t, vals)
	h := newTestHandler(vals, &recorder{})
	resp, err := h.PrepareProposal()(enabledCtx(2), &abci.RequestPrepareProposal{
		Height: testHeight + 1, MaxTxBytes: 10_000, LocalLastCommit: ec,
	})
	if err != nil {
		t.Fatal(err)
	}
	want, err := Decode(resp.Txs[0])
	if err != nil {
		t.Fatal(err)
	}
	empty, _ := Encode(Bundle{Layout: LayoutV3})
	fresh := NewAccepted() // a node that processed nothing
	if b, found, reused, err := fresh.Find(resp.Txs); err != nil || !found || reused || !sameBundle(b, want) {
		t.Fatalf("a node that did not process the proposal: found %v, reused %v, %v", found, reused, err)
	}

	if process(t, h, resp.Txs, CommitInfoOf(ec)) != abci.ResponseProcessProposal_ACCEPT {
		t.Fatal("proposal rejected")
	}
	b, found, reused, err := h.Accepted().Find(resp.Txs)
	if err != nil || !found || !reused || !sameBundle(b, want) {
		t.Fatalf("the accepted proposal: found %v, reused %v, %v", found, reused, err)
	}
	other := [][]byte{empty}
	if _, found, reused, err := h.Accepted().Find(other); err != nil || !found || reused {
		t.Fatalf("another proposal's bundle: found %v, reused %v, %v", found, reused, err)
	}
	if _, found, reused, _ := h.Accepted().Find(nil); found || reused {
		t.Fatal("a block without a bundle")
	}

	// A rejected proposal is not remembered.
	rejected := newTestHandler(vals, &recorder{})
	if process(t, rejected, [][]byte{empty, empty}, CommitInfoOf(ec)) != abci.ResponseProcessProposal_REJECT {
		t.Fatal("a misplaced bundle was accepted")
	}
	if _, _, reused, _ := rejected.Accepted().Find([][]byte{empty}); reused {
		t.Fatal("a rejected proposal's bundle was reused")
	}
}

func sameBundle(a, b Bundle) bool {
	ea, err1 := Encode(a)
	eb, err2 := Encode(b)
	return err1 == nil && err2 == nil && string(ea) == string(eb)
}
