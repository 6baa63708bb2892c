package breakerstore_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/inferenced/inferenced/x/inference/types"
)

// A record the step's traffic creates hears that block's attested ok: the
// step maps oks for executors with a queued outcome too (the step
// applies traffic first), and a new record's attested history starts as a
// full window of oks, as when an attested miss creates it. Found by the
// simulator's keeper cross-check (sim/keeper_test.go).
func TestAttestedOKReachesARecordTheSameStepCreates(t *testing.T) {
	f := newEvidenceFixture(t)
	f.send(agentA, 1, false)
	f.next()
	f.end() // the miss expires and is queued for the next step
	require.Equal(t, types.HEALTH_STATE_HEALTHY, f.health(1).State)
	require.Zero(t, f.health(1).HeldMisses, "not applied yet")

	for i := byte(1); i <= 4; i++ { // a bundle in which every executor is attested ok
		f.attest(i, false)
	}
	f.begin(f.height + 1)
	require.Equal(t, 1, f.applied.AttestedOKs, "only the executor with a queued outcome gets its ok mapped")
	require.Zero(t, f.applied.AttestedMisses)
	h := f.health(1)
	require.Equal(t, types.HEALTH_STATE_HEALTHY, h.State)
	require.Equal(t, uint32(1), h.HeldMisses)
	require.Equal(t, uint32(types.DefaultHealthCBWindowSamples), h.AttestedSamples,
		"a full attested window of oks, counted over the attested rule's window")
}
