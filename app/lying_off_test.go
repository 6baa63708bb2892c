//go:build !lying

package app

import (
	"testing"

	"cosmossdk.io/log"
	abci "github.com/cometbft/cometbft/abci/types"
	sdk "github.com/cosmos/cosmos-sdk/types"
)

// Attack covered: an operator (or an attacker with access to a validator's
// environment) cannot switch a release binary into a lying mode; the modes
// are compiled in only with -tags lying.
func TestReleaseBuildNeverLies(t *testing.T) {
	t.Setenv("INFERENCED_LIE", "all-miss")
	honest := func(sdk.Context, *abci.RequestExtendVote) (*abci.ResponseExtendVote, error) {
		return &abci.ResponseExtendVote{VoteExtension: []byte("honest")}, nil
	}
	got, err := (&App{}).lyingVotes(honest, log.NewNopLogger())
	if err != nil {
		t.Fatal(err)
	}
	rsp, err := got(sdk.Context{}, &abci.RequestExtendVote{})
	if err != nil || string(rsp.VoteExtension) != "honest" {
		t.Fatalf("release build answered %q, %v", rsp.VoteExtension, err)
	}
}
