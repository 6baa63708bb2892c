package breakerstore_test

import (
	"bytes"
	"testing"

	"cosmossdk.io/log/v2"
	"github.com/stretchr/testify/require"

	sdk "github.com/cosmos/cosmos-sdk/types"

	"github.com/inferenced/inferenced/x/inference/breakerstore"
	"github.com/inferenced/inferenced/x/inference/types"
	"github.com/inferenced/inferenced/x/inference/verdict"
)

// A miss of a request sent before the exclusion, landing after the probe
// restored the executor, is not held against it.
func TestMissesOfRequestsSentBeforeExclusionDoNotReExcludeARestoredExecutor(t *testing.T) {
	p := breakerParams()
	p.ExpirationBlocks = 12
	f := newBreakerFixture(t, p)
	for range 3 {
		f.mustStart(f.newID(), 1, "m")
	}
	for range 3 {
		f.attest(1, true)
		f.next()
	}
	require.Equal(t, types.HEALTH_STATE_EXCLUDED, f.health(1).State)
	f.runUntil(bInitial+1, func() bool { return f.health(1).State == types.HEALTH_STATE_PROBE })
	f.feed(1, "o")
	require.Equal(t, types.HEALTH_STATE_HEALTHY, f.health(1).State)
	f.runUntil(int(p.ExpirationBlocks), func() bool { return f.missed(1) == 3 })
	f.next()
	h := f.health(1)
	require.Equal(t, types.HEALTH_STATE_HEALTHY, h.State)
	require.Zero(t, h.TrafficSamples, "stale misses are not samples")
}

// An executor's samples of one block are applied to its record as a batch:
// a success that pushes its last miss out of the history does not drop the
// record halfway, which would start a miss later in the batch from nothing.
func TestSamplesOfOneBlockKeepTheExecutorsHistory(t *testing.T) {
	f := newBreakerFixture(t, breakerParams())
	f.feed(1, "m")
	for range 63 {
		id := f.newID()
		f.mustStart(id, 1, "m")
		require.NoError(t, f.finish(1, id))
	}
	f.next()
	f.mustStart("expires-next-block", 1, "m")
	f.next()
	f.mustStart("ok", 1, "m")
	require.NoError(t, f.finish(1, "ok"))
	f.next() // the block's end expires the other
	f.next()
	h := f.health(1)
	require.Equal(t, uint32(16), h.TrafficSamples)
	require.Equal(t, uint32(1), h.TrafficMisses)
}

func TestTrafficExcludedExecutorNeedsARealProbeSuccess(t *testing.T) {
	f := newBreakerFixture(t, breakerParams())
	f.feed(1, "mmm")
	require.Equal(t, types.SAMPLE_KIND_TRAFFIC, f.health(1).Evidence)
	f.runUntil(bInitial+1, func() bool { return f.health(1).State == types.HEALTH_STATE_PROBE })
	for range 3 {
		f.attest(1, false)
		f.next()
	}
	require.Equal(t, types.HEALTH_STATE_PROBE, f.health(1).State, "a passing health check does not restore it")
	f.feed(1, "o")
	require.Equal(t, types.HEALTH_STATE_HEALTHY, f.health(1).State)
}

func TestAttestedExclusionRestoredByAttestedOKAndReExcludedByAttestedMiss(t *testing.T) {
	f := newBreakerFixture(t, breakerParams())
	for range 3 {
		f.attest(2, true)
		f.next()
	}
	h := f.health(2)
	require.Equal(t, types.HEALTH_STATE_EXCLUDED, h.State)
	require.Equal(t, types.SAMPLE_KIND_ATTESTED, h.Evidence)
	f.runUntil(bInitial+1, func() bool { return f.health(2).State == types.HEALTH_STATE_PROBE })
	f.attest(2, true)
	f.next()
	h = f.health(2)
	require.Equal(t, types.HEALTH_STATE_EXCLUDED, h.State, "any miss in PROBE re-excludes")
	require.Equal(t, uint64(2*bInitial), h.CooldownBlocks)
	f.runUntil(2*bInitial+1, func() bool { return f.health(2).State == types.HEALTH_STATE_PROBE })
	f.attest(2, false)
	f.next()
	h = f.health(2)
	require.Equal(t, types.HEALTH_STATE_HEALTHY, h.State)
	require.Equal(t, types.HEALTH_REASON_ATTESTED_OK, h.Reason)
}

// Attested samples that do not map to the epoch group (a fault between the
// bundle and the group store, which ProcessProposal should have refused)
// cost the block its attested samples, logged, but never the block itself:
// the step still judges the traffic outcomes queued for it.
func TestAttestationNotMatchingTheGroupIsLoggedAndTheStepRunsWithoutIt(t *testing.T) {
	f := newBreakerFixture(t, breakerParams())
	f.mustStart(f.newID(), 1, "m")
	f.next()
	f.end() // the inference expires: a traffic miss queued for executor 1

	n := len(f.group.execs) + 1
	vs := make([]verdict.Verdict, n)
	vs[n-1] = verdict.Miss // a member the group does not have
	samples, err := verdict.Pack(vs)
	require.NoError(t, err)
	var logged bytes.Buffer
	ctx := f.ctx.WithBlockHeight(f.height + 1).WithEventManager(sdk.NewEventManager()).WithLogger(log.NewLogger(&logged))

	applied, err := f.s.Step(ctx, breakerstore.Block{Params: f.params, Attested: breakerstore.Attestation{Members: n, Samples: samples}})
	require.NoError(t, err, "a group fault must not fail the block")
	require.Zero(t, applied.AttestedMisses+applied.AttestedOKs)
	require.Len(t, applied.Misses, 1, "the queued traffic miss is still judged")
	require.Equal(t, addr(1), applied.Misses[0].Executor)
	require.Contains(t, logged.String(), "attested samples do not map to the epoch group")
}
