package breakerstore_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/inferenced/inferenced/x/inference/testutil/testkit"
	"github.com/inferenced/inferenced/x/inference/types"
)

// Transfer agents of the evidence tests.
const (
	agentA byte = agentByte
	agentB byte = agentByte + 1
	agentC byte = agentByte + 2
)

func newEvidenceFixture(t *testing.T, edit ...func(*types.Params)) *fixture {
	t.Helper()
	p := testkit.EvidenceParams()
	for _, e := range edit {
		e(&p)
	}
	return newBreakerFixture(t, p)
}

// send routes one inference from agent to executor, finished at once when
// ok, left to expire otherwise.
func (f *fixture) send(agent, executor byte, ok bool) string {
	f.t.Helper()
	id := f.newID()
	require.NoError(f.t, f.startBy(agent, id, executor, "m"))
	if ok {
		require.NoError(f.t, f.finish(executor, id))
	}
	return id
}
