// Package e2e_test proves the chain's promises end to end: each scenario
// starts its own network of separate processes on 127.0.0.1 (validators,
// fake executors, the load driver) with real consensus and real vote
// extensions, drives faults into it, asserts, prints its figures, and stops
// the network. README.md lists the scenarios.
package e2e_test

import (
	"testing"
	"time"

	ln "github.com/inferenced/inferenced/tests/internal/localnet"
)

// maxBlocksToExclusion is the design's budget from the first block whose
// vote extensions could see an executor's outage to its exclusion: three
// attested misses in a row.
const maxBlocksToExclusion = 3

// start skips under -short (every scenario runs a 4-validator network),
// records the scenario's wall time, and starts its network (cfg carries the
// scenario's own port offset; ln.Start keeps every port below the ephemeral
// range).
func start(t *testing.T, cfg ln.Config) *ln.Net {
	t.Helper()
	skipShort(t)
	begin := time.Now()
	t.Cleanup(func() { t.Logf("wall time: %s", time.Since(begin).Round(time.Second)) })
	return ln.Start(t, cfg)
}

// skipShort skips under -short: every scenario runs a 4-validator network.
// A scenario that builds a binary before start calls it first.
func skipShort(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("starts a 4-validator network; run without -short")
	}
}
