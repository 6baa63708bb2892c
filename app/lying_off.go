//go:build !lying

package app

import (
	"cosmossdk.io/log/v2"
	sdk "github.com/cosmos/cosmos-sdk/types"
)

// lyingVotes is the identity in every real build: lying vote extensions
// exist only in the test build made with -tags lying (lying_on.go).
func (app *App) lyingVotes(honest sdk.ExtendVoteHandler, _ log.Logger) (sdk.ExtendVoteHandler, error) {
	return honest, nil
}
