package keeper_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/inferenced/inferenced/x/inference/types"
)

// Attack: front-running by id. A mempool watcher (agent B) sees agent A's
// start and lands its own start with A's id first. Ids are unique per
// agent, so A's start still succeeds: two inferences, each its agent's,
// each finished, counted and credited on its own.
func TestAttackFrontRunnerTakingAnIDNoLongerBlocksItsAgent(t *testing.T) {
	f := inferenceFixture(t)
	f.advanceTo(8)
	_, err := f.startAs(secondAgentByte, "victim-1", 2, "m") // B front-runs
	require.NoError(t, err)
	_, err = f.startAs(agentByte, "victim-1", 1, "m") // A's own start lands after it
	require.NoError(t, err, "another agent's inference of the same id does not block A")

	a, err := f.k.Inference(f.ctx, addr(agentByte), "victim-1")
	require.NoError(t, err)
	b, err := f.k.Inference(f.ctx, addr(secondAgentByte), "victim-1")
	require.NoError(t, err)
	require.Equal(t, bech(1), a.Executor)
	require.Equal(t, bech(2), b.Executor)

	// A's executor finishes A's inference; B's is untouched, and B's
	// executor cannot finish A's by naming the id alone.
	require.ErrorIs(t, f.finishOf(2, agentByte, "victim-1"), types.ErrNotExecutor)
	require.NoError(t, f.finishOf(1, agentByte, "victim-1"))
	b, err = f.k.Inference(f.ctx, addr(secondAgentByte), "victim-1")
	require.NoError(t, err)
	require.Equal(t, types.INFERENCE_STATUS_STARTED, b.Status)
	require.Equal(t, uint64(1), f.agent(agentByte).Standing.Finished, "A's finish is credited to A")
	require.Zero(t, f.agent(secondAgentByte).Standing.Finished, "not to the front-runner")

	evs := typedEvents[*types.EventInferenceStarted](t, f.ctx)
	require.Len(t, evs, 2)
	require.Equal(t, [2]string{bech(secondAgentByte), bech(agentByte)}, [2]string{evs[0].TransferAgent, evs[1].TransferAgent})
	fin := typedEvents[*types.EventInferenceFinished](t, f.ctx)
	require.Equal(t, []*types.EventInferenceFinished{{InferenceId: "victim-1", Executor: bech(1), TransferAgent: bech(agentByte)}}, fin)

	// The same agent still cannot start one of its ids twice.
	_, err = f.startAs(agentByte, "victim-1", 2, "m")
	require.ErrorIs(t, err, types.ErrInferenceExists)
}

// A finish names the agent whose inference it closes: an unknown id, the
// right id under the wrong agent, and a malformed agent are refused, and
// nothing is counted.
func TestFinishInferenceNamesItsAgent(t *testing.T) {
	cases := []struct {
		name, agent, id string
		want            error
		mention         string
	}{
		{"unknown id", bech(agentByte), "nobody-started-this", types.ErrInferenceNotFound, "never started"},
		{"wrong agent", bech(secondAgentByte), "mine", types.ErrInferenceNotFound, "never started"},
		{"no agent", "", "mine", types.ErrInvalidInference, "transfer_agent is required"},
		{"malformed agent", "infer1bad", "mine", types.ErrInvalidInference, "transfer_agent"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := inferenceFixture(t)
			f.mustStart("mine", 1, "m")
			_, err := f.msg.FinishInference(f.ctx, &types.MsgFinishInference{
				Creator: bech(1), TransferAgent: tc.agent, InferenceId: tc.id, ResponseHash: "cmVzcG9uc2U=",
			})
			require.ErrorIs(t, err, tc.want)
			require.ErrorContains(t, err, tc.mention)
			require.Equal(t, types.INFERENCE_STATUS_STARTED, f.inference("mine").Status)
			require.Zero(t, f.participant(1).CurrentEpochStats.InferenceCount)
		})
	}
}

// Attack: probe hijack by id collision. Agent A's inference holds a PROBE
// executor's slot; agent B starts an inference with the same id on the
// same executor (shadow mode refuses no start) and has it finished. B's
// outcome is not the probe's: the executor stays PROBE with A's probe in
// flight, and only A's outcome restores it.
func TestAttackProbeHijackByIDCollision(t *testing.T) {
	p := breakerParams()
	p.HealthCbEnforce = false
	f := newBreakerFixture(t, withParams(p))
	f.feed(1, "mmm")
	f.runUntil(bInitial+1, func() bool { return f.health(1).State == types.HEALTH_STATE_PROBE })

	_, err := f.startAs(agentByte, "probe-x", 1, "m")
	require.NoError(t, err)
	h := f.health(1)
	require.Equal(t, [2]string{"probe-x", bech(agentByte)}, [2]string{h.ProbeInferenceId, h.ProbeAgent})
	probeEvs := typedEvents[*types.EventProbeStarted](t, f.ctx)
	require.Equal(t, bech(agentByte), probeEvs[len(probeEvs)-1].TransferAgent)

	_, err = f.startAs(secondAgentByte, "probe-x", 1, "m")
	require.NoError(t, err)
	require.NoError(t, f.finishOf(1, secondAgentByte, "probe-x"))
	f.next()
	h = f.health(1)
	require.Equal(t, types.HEALTH_STATE_PROBE, h.State, "B's inference of the probe's id is not the probe")
	require.Equal(t, [2]string{"probe-x", bech(agentByte)}, [2]string{h.ProbeInferenceId, h.ProbeAgent}, "A's probe still holds the slot")

	require.NoError(t, f.finishOf(1, agentByte, "probe-x"))
	f.next()
	require.Equal(t, types.HEALTH_STATE_HEALTHY, f.health(1).State)
	require.Equal(t, types.HEALTH_REASON_PROBE_SUCCEEDED, f.health(1).Reason)
}

// The expiry event names the inference by agent and id, as the start and
// finish events do: two agents' inferences of one id expire as two events.
func TestExpiryEventsCarryAgentAndID(t *testing.T) {
	f := pruneFixture(t, 1)
	f.begin(2)
	_, err := f.startAs(agentByte, "same", 1, "m")
	require.NoError(t, err)
	_, err = f.startAs(secondAgentByte, "same", 2, "m")
	require.NoError(t, err)
	f.end()
	f.advanceTo(1 + testExpiration)
	f.begin(2 + testExpiration)
	f.end()
	require.ElementsMatch(t, []*types.EventInferenceExpired{
		{InferenceId: "same", Executor: bech(1), TransferAgent: bech(agentByte)},
		{InferenceId: "same", Executor: bech(2), TransferAgent: bech(secondAgentByte)},
	}, typedEvents[*types.EventInferenceExpired](t, f.ctx))
}
