//go:build !lying

package app

import (
	"testing"

	"cosmossdk.io/log/v2"
	abci "github.com/cometbft/cometbft/abci/types"
	sdk "github.com/cosmos/cosmos-sdk/types"
)

// Attack covered: an operator (or an attacker with access to a validator's
// environment) cannot switch a release binary into a lying mode; the modes
// are compiled in only with -tags lying.
func TestReleaseBuildNeverLies(t *testing.T) {
	honest := func(sdk.Context, *abci.RequestExtendVote) (*abci.ResponseExtendVote, error) {
		return &abci.ResponseExtendVote{VoteExtension: []byte("honest")}, nil
	}
	// Every mode of the test build (lying_on.go), about liveness and
	// about service, and its file form.
	for _, mode := range []string{"all-miss", "all-ok", "garbage", "oversized", "wrong-epoch",
		"service-max", "service-zero", "service-garbage", "service-target", "service-target:1", "file:/tmp/lie-mode"} {
		t.Setenv("INFERENCED_LIE", mode)
		got, err := (&App{}).lyingVotes(honest, log.NewNopLogger())
		if err != nil {
			t.Fatal(err)
		}
		rsp, err := got(sdk.Context{}, &abci.RequestExtendVote{})
		if err != nil || string(rsp.VoteExtension) != "honest" {
			t.Fatalf("%s: release build answered %q, %v", mode, rsp.VoteExtension, err)
		}
		// Nor can it accept its own lies: its VerifyVoteExtension is the
		// honest one, whatever it was asked to sign.
		verify := (&App{}).lyingVerify(honestReject)
		if v, err := verify(&abci.RequestVerifyVoteExtension{Height: 1, VoteExtension: []byte("honest")}); err != nil || v.Status != abci.ResponseVerifyVoteExtension_REJECT {
			t.Fatalf("%s: release build's VerifyVoteExtension answered %v, %v, want the honest refusal", mode, v, err)
		}
	}
}

func honestReject(*abci.RequestVerifyVoteExtension) (*abci.ResponseVerifyVoteExtension, error) {
	return &abci.ResponseVerifyVoteExtension{Status: abci.ResponseVerifyVoteExtension_REJECT}, nil
}
