//go:build !lying

package app

import (
	"cosmossdk.io/log/v2"
	abci "github.com/cometbft/cometbft/abci/types"
	sdk "github.com/cosmos/cosmos-sdk/types"
)

// lyingVotes is the identity in every real build: lying vote extensions
// exist only in the test build made with -tags lying (lying_on.go).
func (app *App) lyingVotes(honest sdk.ExtendVoteHandler, _ log.Logger) (sdk.ExtendVoteHandler, error) {
	return honest, nil
}

// verifyFunc is the ABCI VerifyVoteExtension method.
type verifyFunc func(*abci.RequestVerifyVoteExtension) (*abci.ResponseVerifyVoteExtension, error)

// lyingVerify is the identity in every real build: only the test build
// (lying_on.go) accepts its own lies.
func (app *App) lyingVerify(honest verifyFunc) verifyFunc { return honest }
