package keeper_test

import (
	"testing"

	"github.com/inferenced/inferenced/x/inference/testutil/testkit"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/inferenced/inferenced/x/inference/types"
)

// The two transfer agents of the fixture's genesis.
const (
	agentA byte = agentByte
	agentB byte = secondAgentByte
	agentC byte = agentByte + 2
)

// evidenceParams are the breaker test params with the default
// corroboration rule (two agents) and miss allowance.
func evidenceParams() types.Params { return testkit.EvidenceParams() }

func newEvidenceFixture(t *testing.T, edit ...func(*types.Params)) *fixture {
	t.Helper()
	p := evidenceParams()
	for _, e := range edit {
		e(&p)
	}
	return newBreakerFixture(t, withParams(p))
}

// startBy starts an inference on executor for agent.
func (f *fixture) startBy(agent byte, id string, executor byte) error {
	_, err := f.msg.StartInference(f.ctx, &types.MsgStartInference{
		Creator: bech(agent), Executor: bech(executor), InferenceId: id, Model: "m", PromptHash: "cHJvbXB0",
	})
	if err == nil {
		f.noteStart(agent, id)
	}
	return err
}

// send routes one inference from agent to executor, finished at once when
// ok, left to expire otherwise.
func (f *fixture) send(agent, executor byte, ok bool) string {
	f.t.Helper()
	id := f.newID()
	require.NoError(f.t, f.startBy(agent, id, executor))
	if ok {
		require.NoError(f.t, f.finish(executor, id))
	}
	return id
}

// standing is agent's standing this epoch, as the query shows it.
func (f *fixture) standing(agent byte) types.TransferAgentView {
	f.t.Helper()
	resp, err := f.query.TransferAgent(f.ctx, &types.QueryTransferAgentRequest{Address: bech(agent)})
	require.NoError(f.t, err)
	return resp.Agent
}

// P1 and P3: a registered agent that never forwards its inferences sends
// 100 starts over 50 blocks to an executor the validators attest OK while
// another agent's traffic to it succeeds. The executor stays HEALTHY and
// ACTIVE with no miss counted; the griefer is stopped once its
// charged misses exceed its allowance, and every later start is
// refused; the honest agent's standing is untouched.
func TestAttackOneAgentCannotExcludeAHealthyExecutor(t *testing.T) {
	f := newEvidenceFixture(t)
	accepted, refused := 0, 0
	for range 50 {
		for range 2 {
			if err := f.startBy(agentA, f.newID(), 1); err != nil {
				require.ErrorIs(t, err, types.ErrAgentStopped)
				refused++
			} else {
				accepted++
			}
		}
		f.send(agentB, 1, true)
		f.attest(1, false)
		f.next()
		require.Equal(t, types.HEALTH_STATE_HEALTHY, f.health(1).State, "height %d", f.height)
	}
	f.next()
	f.next()
	p := f.participant(1)
	require.Equal(t, types.PARTICIPANT_STATUS_ACTIVE, p.Status)
	require.Zero(t, p.CurrentEpochStats.MissedRequests, "no miss of the griefer counted")

	griefer := f.standing(agentA)
	allowance := griefer.MissAllowance
	require.Equal(t, types.DefaultTransferAgentMissAllowance, allowance, "it finished nothing")
	require.NotZero(t, griefer.Agent.Standing.StoppedHeight)
	require.False(t, griefer.MayStart)
	require.Equal(t, uint64(accepted), griefer.Agent.Standing.ChargedMisses)
	// Stopped at its (allowance+1)-th charged miss; the starts still in
	// flight then (two per block, each charged two blocks after its start)
	// are all it got beyond that.
	inFlight := 2 * 2
	require.LessOrEqual(t, accepted, int(allowance)+1+inFlight)
	require.Equal(t, 100, accepted+refused)

	honest := f.standing(agentB)
	require.Zero(t, honest.Agent.Standing.ChargedMisses)
	require.Equal(t, uint64(50), honest.Agent.Standing.Finished)
	require.True(t, honest.MayStart)
}

// P1 for the SPRT: however many misses one agent makes (its allowance set
// out of the way), the executor is never made INACTIVE.
func TestAttackOneAgentCannotMakeAnExecutorInactive(t *testing.T) {
	f := newEvidenceFixture(t, func(p *types.Params) {
		p.DowntimeHThreshold = types.DefaultParams().DowntimeHThreshold
		p.TransferAgentMissAllowance = 1000
	})
	for range 60 {
		f.send(agentA, 1, false)
		f.next()
	}
	f.next()
	f.next()
	p := f.participant(1)
	require.Equal(t, types.PARTICIPANT_STATUS_ACTIVE, p.Status)
	require.Zero(t, p.CurrentEpochStats.MissedRequests)
	require.Equal(t, types.HEALTH_STATE_HEALTHY, f.health(1).State)
	require.Equal(t, uint32(bWindow), f.health(1).HeldMisses, "the ledger holds at most a traffic window")
	require.Equal(t, uint64(60), f.standing(agentA).Agent.Standing.ChargedMisses)
}

// degradedFails is a 40% failure pattern that hits both agents (they send
// in turn): of every five inferences, the second and fifth fail.
func degradedFails(n int) bool { return n%5 == 1 || n%5 == 4 }

// P2: a degraded executor (40% of its inferences fail, whoever sends them)
// with two agents routing to it is excluded on traffic evidence within 40
// of its inferences, the SPRT counts its corroborated misses, and only a
// probe that succeeds restores it.
func TestDegradedExecutorIsExcludedOnTwoAgentsTraffic(t *testing.T) {
	// Inferences in flight for three blocks, as on the localnet: misses of
	// the two agents overlap in time, as they do when the executor fails.
	f := newEvidenceFixture(t, func(p *types.Params) { p.ExpirationBlocks = 3 })
	n := 0
	for f.health(1).State == types.HEALTH_STATE_HEALTHY {
		require.Less(t, n, 40, "not excluded within 40 inferences")
		for _, agent := range []byte{agentA, agentB} { // both in flight at once
			f.send(agent, 1, !degradedFails(n))
			n++
		}
		f.next()
	}
	t.Logf("excluded after %d inferences", n)
	h := f.health(1)
	require.Equal(t, types.HEALTH_STATE_EXCLUDED, h.State)
	require.Equal(t, types.SAMPLE_KIND_TRAFFIC, h.Evidence)
	require.NotZero(t, f.participant(1).CurrentEpochStats.MissedRequests)

	f.runUntil(bInitial+3, func() bool { return f.health(1).State == types.HEALTH_STATE_PROBE })
	for range 3 { // a passing health check does not restore a traffic exclusion
		f.attest(1, false)
		f.next()
	}
	require.Equal(t, types.HEALTH_STATE_PROBE, f.health(1).State)
	f.send(agentB, 1, true)
	f.next()
	require.Equal(t, types.HEALTH_STATE_HEALTHY, f.health(1).State)
	require.Equal(t, types.HEALTH_REASON_PROBE_SUCCEEDED, f.health(1).Reason)
}

// excludeOnTraffic excludes executor 1 on two agents' misses and runs to
// its PROBE.
func excludeOnTraffic(t *testing.T, f *fixture) {
	t.Helper()
	for range 2 {
		f.send(agentA, 1, false)
		f.send(agentB, 1, false)
		f.next()
	}
	f.runUntil(4, func() bool { return f.health(1).State == types.HEALTH_STATE_EXCLUDED })
	f.runUntil(bInitial+2, func() bool { return f.health(1).State == types.HEALTH_STATE_PROBE })
}

// Attack: an agent takes the probe slot of a recovering executor and lets
// the probe expire. The executor is not re-excluded: the slot is released,
// the griefer may not take it again, it is charged, and another agent's
// probe restores the executor.
func TestAttackGrieferLettingTheProbeExpireDoesNotReExclude(t *testing.T) {
	f := newEvidenceFixture(t)
	excludeOnTraffic(t, f)
	f.send(agentA, 1, false)
	require.NotEmpty(t, f.health(1).ProbeInferenceId)
	before := f.standing(agentA).Agent.Standing.ChargedMisses
	f.next()
	f.next()
	h := f.health(1)
	require.Equal(t, types.HEALTH_STATE_PROBE, h.State)
	require.Empty(t, h.ProbeInferenceId, "slot released")
	require.Equal(t, uint32(1), h.HeldMisses)
	require.Equal(t, before+1, f.standing(agentA).Agent.Standing.ChargedMisses)
	require.Len(t, typedEvents[*types.EventTrafficMissHeld](t, f.ctx), 1)

	err := f.startBy(agentA, f.newID(), 1)
	require.ErrorIs(t, err, types.ErrProbeTaken)
	require.Contains(t, err.Error(), "another agent must probe it")

	f.send(agentB, 1, true)
	f.next()
	require.Equal(t, types.HEALTH_STATE_HEALTHY, f.health(1).State)
	require.Equal(t, uint32(1), f.health(1).Exclusions, "never re-excluded")
}

// Two distinct agents' probes both expiring is corroborated evidence: the
// executor is re-excluded with its cooldown doubled.
func TestTwoAgentsProbeMissesReExclude(t *testing.T) {
	f := newEvidenceFixture(t)
	excludeOnTraffic(t, f)
	before := f.standing(agentA).Agent.Standing.ChargedMisses
	f.send(agentA, 1, false)
	f.next()
	f.next()
	require.Equal(t, types.HEALTH_STATE_PROBE, f.health(1).State)
	f.send(agentB, 1, false)
	f.next()
	f.next()
	h := f.health(1)
	require.Equal(t, types.HEALTH_STATE_EXCLUDED, h.State)
	require.Equal(t, types.HEALTH_REASON_PROBE_MISSED, h.Reason)
	require.Equal(t, uint64(2*bInitial), h.CooldownBlocks)
	require.Equal(t, before+1, f.standing(agentA).Agent.Standing.ChargedMisses,
		"a miss backed only by another agent stays charged")
}

// An attested miss during an inference's lifetime corroborates one agent's
// miss: it counts against the executor, and the agent's charge is
// refunded.
func TestAttestedMissCorroboratesOneAgentsMiss(t *testing.T) {
	f := newEvidenceFixture(t)
	f.send(agentA, 1, false)
	f.next()
	f.attest(1, true) // applied with the expiry, in the next block's step
	f.next()
	require.Equal(t, uint64(1), f.participant(1).CurrentEpochStats.MissedRequests)
	require.Zero(t, f.health(1).HeldMisses)
	require.Equal(t, uint32(1), f.health(1).TrafficMisses)
	st := f.standing(agentA).Agent.Standing
	require.Zero(t, st.ChargedMisses)
	require.Equal(t, uint64(1), st.CorroboratedMisses)
	evs := typedEvents[*types.EventTrafficMissCounted](t, f.ctx)
	require.Len(t, evs, 1)
	require.True(t, evs[0].ByAttestation)
	require.True(t, evs[0].WasHeld)
}

// P4: a dead executor is excluded by attestation in three blocks whatever
// the agents' traffic does (here: their misses are still held).
func TestDeadExecutorIsExcludedByAttestationAsBefore(t *testing.T) {
	f := newEvidenceFixture(t)
	for b := range 3 {
		f.send(agentA, 1, false)
		f.attest(1, true)
		f.next()
		if b < 2 {
			require.Equal(t, types.HEALTH_STATE_HEALTHY, f.health(1).State)
		}
	}
	require.Equal(t, types.HEALTH_STATE_EXCLUDED, f.health(1).State)
	require.Equal(t, types.SAMPLE_KIND_ATTESTED, f.health(1).Evidence)
}

// Attack (c): an account that is not a registered transfer agent cannot
// start an inference; nothing is stored.
func TestAttackUnregisteredAccountCannotStart(t *testing.T) {
	f := newEvidenceFixture(t)
	err := f.startBy(0x77, "outsider", 1)
	require.ErrorIs(t, err, types.ErrNotTransferAgent)
	_, err = f.query.Inference(f.ctx, &types.QueryInferenceRequest{InferenceId: "outsider", TransferAgent: bech(0x77)})
	require.Equal(t, codes.NotFound, status.Code(err))
}

// addAgents funds and registers more transfer agents with the minimum bond.
func addAgents(t *testing.T, f *fixture, agents ...byte) {
	t.Helper()
	p, err := f.k.Params.Get(f.ctx)
	require.NoError(t, err)
	for _, a := range agents {
		f.bank.Fund(addr(a), p.TransferAgentMinBond)
		_, err := f.msg.RegisterTransferAgent(f.ctx, &types.MsgRegisterTransferAgent{Creator: bech(a), Bond: p.TransferAgentMinBond})
		require.NoError(t, err)
	}
}

// Attack: a griefer watches the chain for honest misses of an executor
// (they are public once they expire) and then lets a burst of its own
// expire, hoping to pair with them. Misses pair only when they were in
// flight at the same time, so the burst pairs with nothing.
func TestAttackGrieferPairingWithHonestMissesAfterTheFactDoesNotExclude(t *testing.T) {
	f := newEvidenceFixture(t)
	for i := range 12 { // honest traffic with two misses, blocks apart
		f.send(agentB, 1, i != 3 && i != 8)
		f.next()
	}
	f.next()
	require.Equal(t, uint32(2), f.health(1).HeldMisses)
	for range 2 {
		f.send(agentA, 1, false)
	}
	f.next()
	f.next()
	h := f.health(1)
	require.Equal(t, types.HEALTH_STATE_HEALTHY, h.State)
	require.Equal(t, uint32(4), h.HeldMisses, "nothing paired")
	require.Zero(t, f.participant(1).CurrentEpochStats.MissedRequests)
}

// Attack: a held miss of another agent left over from before an exclusion
// would pair with a griefer's expired probe and re-exclude the executor.
// Probe misses pair only with probes of the same PROBE period.
func TestAttackLeftoverHeldMissDoesNotReExcludeFromProbe(t *testing.T) {
	f := newEvidenceFixture(t)
	addAgents(t, f, agentC)
	f.send(agentB, 1, false) // held, never paired
	for range 6 {
		f.next()
	}
	require.Equal(t, uint32(1), f.health(1).HeldMisses)
	for range 3 { // excluded by attestation, long after that miss
		f.attest(1, true)
		f.next()
	}
	require.Equal(t, types.HEALTH_STATE_EXCLUDED, f.health(1).State)
	f.runUntil(bInitial+2, func() bool { return f.health(1).State == types.HEALTH_STATE_PROBE })
	f.send(agentC, 1, false) // the griefer's probe
	f.next()
	f.next()
	h := f.health(1)
	require.Equal(t, types.HEALTH_STATE_PROBE, h.State, "re-excluded by one agent's probe: %+v", h)
	require.Equal(t, uint32(1), h.Exclusions)
	require.Empty(t, h.ProbeInferenceId, "slot released")
}

// Attack: an agent keeps many inferences in flight on an executor and,
// when the executor blips for one block (one attested miss), lets all of
// them expire, so that the attestation would count every one. An attested
// miss counts one miss per agent; the agent's others are excused (not
// counted, not charged).
func TestAttackOneAttestedBlipCountsOneMissPerAgent(t *testing.T) {
	f := newEvidenceFixture(t, func(p *types.Params) {
		p.ExpirationBlocks = 3
		p.DowntimeHThreshold = types.DefaultParams().DowntimeHThreshold
	})
	for range 30 {
		f.send(agentA, 1, false)
	}
	f.next()
	f.attest(1, true) // the one blip, while all 30 are in flight
	for range 5 {
		f.next()
	}
	h := f.health(1)
	require.Equal(t, types.HEALTH_STATE_HEALTHY, h.State)
	p := f.participant(1)
	require.Equal(t, uint64(1), p.CurrentEpochStats.MissedRequests, "one miss per agent per attested miss")
	require.Equal(t, types.PARTICIPANT_STATUS_ACTIVE, p.Status)
	require.Zero(t, f.standing(agentA).Agent.Standing.ChargedMisses, "excused misses are not charged")
}
