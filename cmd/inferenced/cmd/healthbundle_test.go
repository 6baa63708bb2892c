package cmd

import (
	"bytes"
	"encoding/hex"
	"testing"

	abci "github.com/cometbft/cometbft/abci/types"
	"github.com/cometbft/cometbft/crypto/ed25519"
	cmtproto "github.com/cometbft/cometbft/proto/tendermint/types"
	cmttypes "github.com/cometbft/cometbft/types"

	"github.com/inferenced/inferenced/abci/proposals"
	"github.com/inferenced/inferenced/abci/ve"
	"github.com/inferenced/inferenced/x/inference/types"
	"github.com/inferenced/inferenced/x/inference/verdict"
)

// The health-bundle command reads a decided block's bundle in whichever
// layout the block carries: HEALTH2 (blocks before the v3 switch, the
// upgrade block included) and HEALTH3 give the same view but for the
// layout's name.
func TestDescribeBundleReadsEitherLayout(t *testing.T) {
	vals := []*cmttypes.Validator{
		cmttypes.NewValidator(ed25519.GenPrivKeyFromSecret([]byte("a")).PubKey(), 70),
		cmttypes.NewValidator(ed25519.GenPrivKeyFromSecret([]byte("b")).PubKey(), 30),
	}
	packed, err := verdict.Pack([]verdict.Verdict{verdict.Miss, verdict.OK})
	if err != nil {
		t.Fatal(err)
	}
	ext, err := ve.Encode(types.HealthVoteExtension{EpochIndex: 3, Verdicts: packed}, 2)
	if err != nil {
		t.Fatal(err)
	}
	ec := abci.ExtendedCommitInfo{Votes: []abci.ExtendedVoteInfo{
		{Validator: abci.Validator{Address: vals[0].Address, Power: 70}, BlockIdFlag: cmtproto.BlockIDFlagCommit,
			VoteExtension: ext, ExtensionSignature: bytes.Repeat([]byte{1}, 64)},
		{Validator: abci.Validator{Address: vals[1].Address, Power: 30}, BlockIdFlag: cmtproto.BlockIDFlagAbsent},
	}}
	members := []types.EpochMember{{Address: "exec0"}, {Address: "exec1"}}
	for _, layout := range []proposals.Layout{proposals.LayoutV2, proposals.LayoutV3} {
		b, err := proposals.NewBundle(layout, ec, 3, 2, packed, nil)
		if err != nil {
			t.Fatal(err)
		}
		tx, err := proposals.Encode(b)
		if err != nil {
			t.Fatal(err)
		}
		block := &cmttypes.Block{
			Header: cmttypes.Header{Height: 10},
			Data:   cmttypes.Data{Txs: cmttypes.Txs{tx}},
			LastCommit: &cmttypes.Commit{Height: 9, Signatures: []cmttypes.CommitSig{
				{BlockIDFlag: cmttypes.BlockIDFlagCommit, ValidatorAddress: vals[0].Address},
				{BlockIDFlag: cmttypes.BlockIDFlagAbsent},
			}},
		}
		found, ok, err := proposals.Find(block.Txs.ToSliceOfBytes())
		if !ok || err != nil {
			t.Fatalf("%s: Find: %v %v", layout, ok, err)
		}
		view, err := describeBundle(block, found, vals, members, nil)
		if err != nil {
			t.Fatalf("%s: %v", layout, err)
		}
		if view.Layout != layout.String() || view.Epoch != 3 || view.Members != 2 || view.Bytes != len(tx) || view.Empty {
			t.Fatalf("%s: view %+v", layout, view)
		}
		if len(view.Votes) != 2 || view.Votes[0].Status != "attested" || view.Votes[1].Status != "absent" ||
			view.Votes[0].Validator != hex.EncodeToString(vals[0].Address) ||
			len(view.Votes[0].Verdicts) != 2 || view.Votes[0].Verdicts[0] != "miss" || view.Votes[0].Verdicts[1] != "ok" {
			t.Fatalf("%s: votes %+v", layout, view.Votes)
		}
		if len(view.Samples) != 2 || view.Samples[0] != (bundleSample{Index: 0, Executor: "exec0", Sample: "miss"}) ||
			view.Samples[1] != (bundleSample{Index: 1, Executor: "exec1", Sample: "ok"}) {
			t.Fatalf("%s: samples %+v", layout, view.Samples)
		}
		if _, err := describeBundle(block, found, vals[:1], members, nil); err == nil {
			t.Fatalf("%s: a validator set that does not match the commit", layout)
		}
	}
}
