package preblock_test

import (
	abci "github.com/cometbft/cometbft/abci/types"
	sdk "github.com/cosmos/cosmos-sdk/types"

	"github.com/inferenced/inferenced/abci/proposals"
	"github.com/inferenced/inferenced/x/inference/aggregate"
	"github.com/inferenced/inferenced/x/inference/keeper"
	"github.com/inferenced/inferenced/x/inference/verdict"
)

// The calls of BenchmarkAttestationBlock that depend on the release:
// scripts/bench-attestation.sh gives an older base commit its own
// (scripts/bench-bundle-v2.go.txt: the HEALTH2 constructor, absolute
// verdicts).

// newBenchBundle is the bundle a proposer of this release injects (HEALTH3).
func newBenchBundle(commit abci.ExtendedCommitInfo, epoch uint64, n int, samples, rates []byte) (proposals.Bundle, error) {
	return proposals.NewBundle(proposals.LayoutV3, commit, epoch, n, samples, rates)
}

// benchVerdicts is a validator's packed verdicts as this release's
// ExtendVote sends them: relative to the chain's reference.
func benchVerdicts(packed, ref []byte, n int) ([]byte, error) {
	return verdict.Relative(packed, ref, n)
}

// benchReference is the reference the proposal handlers read from state
// for the block's extensions.
func benchReference(k keeper.Keeper, ctx sdk.Context, epoch uint64, n int) ([]byte, error) {
	return k.VerdictReference(ctx, benchVoteHeight, epoch, n)
}

// benchTally is the proposal handlers' tally of this release.
func benchTally(votes []aggregate.Vote, n int, ref []byte) ([]byte, error) {
	return aggregate.PackedAgainst(votes, n, ref)
}
