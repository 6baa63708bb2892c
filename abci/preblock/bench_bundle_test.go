package preblock_test

import (
	abci "github.com/cometbft/cometbft/abci/types"

	"github.com/inferenced/inferenced/abci/proposals"
)

// newBenchBundle is the bundle a proposer of this release injects (HEALTH3).
// It is the one call of BenchmarkAttestationBlock that depends on the
// release: scripts/bench-attestation.sh gives an older base commit its own
// (scripts/bench-bundle-v2.go.txt, the HEALTH2 constructor).
func newBenchBundle(commit abci.ExtendedCommitInfo, epoch uint64, n int, samples, rates []byte) (proposals.Bundle, error) {
	return proposals.NewBundle(proposals.LayoutV3, commit, epoch, n, samples, rates)
}
