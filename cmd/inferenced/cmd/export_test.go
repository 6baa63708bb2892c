package cmd

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"testing"

	cmtproto "github.com/cometbft/cometbft/proto/tendermint/types"

	genutiltypes "github.com/cosmos/cosmos-sdk/x/genutil/types"
)

// sdkExportedGenesis is the document the SDK's export writes for consensus
// params with vote extensions on at height 7: its ConsensusGenesis drops them
// (cosmos/cosmos-sdk#26741), which this test checks first so that it fails
// when an SDK upgrade fixes it and the repair can go.
func sdkExportedGenesis(t *testing.T) *genutiltypes.AppGenesis {
	t.Helper()
	params := cmtproto.ConsensusParams{
		Block:     &cmtproto.BlockParams{MaxBytes: 1 << 20, MaxGas: 100_000_000},
		Evidence:  &cmtproto.EvidenceParams{MaxAgeNumBlocks: 100, MaxAgeDuration: 1e9, MaxBytes: 1 << 10},
		Validator: &cmtproto.ValidatorParams{PubKeyTypes: []string{"ed25519"}},
		Abci:      &cmtproto.ABCIParams{VoteExtensionsEnableHeight: 7},
	}
	doc := &genutiltypes.AppGenesis{
		ChainID: "test", InitialHeight: 7, AppState: json.RawMessage(`{}`),
		Consensus: genutiltypes.NewConsensusGenesis(params, nil),
	}
	if got := doc.Consensus.Params.ABCI.VoteExtensionsEnableHeight; got != 0 {
		t.Fatalf("the SDK's export now keeps vote_extensions_enable_height (%d): the repair in export.go can go", got)
	}
	return doc
}

func TestExportKeepsVoteExtensionsOnStdout(t *testing.T) {
	bz, err := json.Marshal(sdkExportedGenesis(t))
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := writeWithABCIParams(bytes.NewReader(bz), &out, cmtproto.ABCIParams{VoteExtensionsEnableHeight: 7}); err != nil {
		t.Fatal(err)
	}
	doc, err := genutiltypes.AppGenesisFromReader(&out)
	if err != nil {
		t.Fatal(err)
	}
	if got := doc.Consensus.Params.ABCI.VoteExtensionsEnableHeight; got != 7 {
		t.Fatalf("vote_extensions_enable_height %d, want 7", got)
	}
	if doc.Consensus.Params.Block.MaxGas != 100_000_000 || doc.InitialHeight != 7 {
		t.Fatalf("other fields changed: %+v, initial height %d", doc.Consensus.Params.Block, doc.InitialHeight)
	}
}

func TestExportKeepsVoteExtensionsInTheOutputDocument(t *testing.T) {
	file := filepath.Join(t.TempDir(), "export.json")
	if err := sdkExportedGenesis(t).SaveAs(file); err != nil {
		t.Fatal(err)
	}
	if err := rewriteWithABCIParams(file, cmtproto.ABCIParams{VoteExtensionsEnableHeight: 7}); err != nil {
		t.Fatal(err)
	}
	doc, err := genutiltypes.AppGenesisFromFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if got := doc.Consensus.Params.ABCI.VoteExtensionsEnableHeight; got != 7 {
		t.Fatalf("vote_extensions_enable_height %d, want 7", got)
	}
	if err := doc.ValidateAndComplete(); err != nil {
		t.Fatalf("the rewritten genesis does not validate: %v", err)
	}
}

func TestExportRefusesAGenesisWithoutConsensusParams(t *testing.T) {
	doc := &genutiltypes.AppGenesis{ChainID: "test", AppState: json.RawMessage(`{}`)}
	if err := withABCIParams(doc, cmtproto.ABCIParams{VoteExtensionsEnableHeight: 7}); err == nil {
		t.Fatal("no error for a genesis without consensus params")
	}
}

func TestOneExportCommandWithTheSDKsFlags(t *testing.T) {
	root, err := NewRootCmd()
	if err != nil {
		t.Fatal(err)
	}
	var found int
	for _, c := range root.Commands() {
		if c.Name() == "export" {
			found++
			if c.Flags().Lookup("output-document") == nil || c.Flags().Lookup("height") == nil {
				t.Fatal("the export command lost the SDK's flags")
			}
		}
	}
	if found != 1 {
		t.Fatalf("%d export commands, want 1", found)
	}
}
