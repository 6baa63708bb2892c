package sim

import (
	"github.com/stretchr/testify/require"

	"github.com/inferenced/inferenced/x/inference/breaker"
	"github.com/inferenced/inferenced/x/inference/types"
)

// execView is one executor as both sides must show it after a block: its
// breaker record as the ExecutorHealth query reports it, and its epoch
// stats and status.
type execView struct {
	State                                 types.HealthState
	Reason                                types.HealthReason
	Evidence                              types.SampleKind
	Since, ExcludedAt                     int64
	Cooldown                              uint64
	Exclusions, CapRefusals               uint32
	TrafficSamples, TrafficMisses         uint32
	AttestedSamples, AttestedMisses, Held uint32
	Probe                                 string
	InferenceCount, MissedRequests        uint64
	Status                                types.ParticipantStatus
}

// agentView is one agent's standing this epoch.
type agentView struct {
	Finished, Charged uint64
	Stopped           bool
}

// simView is the simulator's executor as the keeper would show it: the
// enums are the breaker's, as x/inference/breakerstore converts them, and each
// kind's window is counted over that kind's trip-rule window.
func simView(x execState, rules breaker.Params) execView {
	r := x.Record
	v := execView{
		State: types.HealthState(r.State), Reason: types.HealthReason(r.Reason), Evidence: types.SampleKind(r.Evidence),
		Since: r.Since, ExcludedAt: r.ExcludedAt, Cooldown: r.Cooldown, Exclusions: r.Exclusions, CapRefusals: r.CapRefusals,
		Held: x.Held, InferenceCount: x.Finished, MissedRequests: x.Missed, Status: types.PARTICIPANT_STATUS_ACTIVE,
	}
	v.TrafficSamples, v.TrafficMisses = r.Windows[breaker.Traffic].Last(rules.Rules[breaker.Traffic].WindowSamples)
	v.AttestedSamples, v.AttestedMisses = r.Windows[breaker.Attested].Last(rules.Rules[breaker.Attested].WindowSamples)
	if x.ProbeID != 0 {
		v.Probe = inferenceID(x.ProbeID)
	}
	if x.Inactive {
		v.Status = types.PARTICIPANT_STATUS_INACTIVE
	}
	return v
}

func (r *replay) keeperView(i int) execView {
	t := r.t
	ctx := r.tc.Ctx
	res, err := r.q.ExecutorHealth(ctx, &types.QueryExecutorHealthRequest{Address: r.bech(r.execs[i])})
	require.NoError(t, err)
	h := res.Health
	p, err := r.k.Participants.Get(ctx, r.execs[i])
	require.NoError(t, err)
	return execView{
		State: h.State, Reason: h.Reason, Evidence: h.Evidence, Since: h.SinceHeight, ExcludedAt: h.ExcludedAt,
		Cooldown: h.CooldownBlocks, Exclusions: h.Exclusions, CapRefusals: h.CapRefusals,
		TrafficSamples: h.TrafficSamples, TrafficMisses: h.TrafficMisses,
		AttestedSamples: h.AttestedSamples, AttestedMisses: h.AttestedMisses, Held: h.HeldMisses,
		Probe: h.ProbeInferenceId, InferenceCount: p.CurrentEpochStats.InferenceCount,
		MissedRequests: p.CurrentEpochStats.MissedRequests, Status: p.Status,
	}
}

func (r *replay) keeperAgent(a int) agentView {
	res, err := r.q.TransferAgent(r.tc.Ctx, &types.QueryTransferAgentRequest{Address: r.bech(r.agents[a])})
	require.NoError(r.t, err)
	s := res.Agent.Agent.Standing
	return agentView{Finished: s.Finished, Charged: s.ChargedMisses, Stopped: s.StoppedHeight != 0}
}

// compare fails at the first executor or agent that differs after b.
func (r *replay) compare(b *blockTrace) {
	for i, x := range b.End.Execs {
		want, got := simView(x, r.rules), r.keeperView(i)
		if want != got {
			r.t.Fatalf("after block %d, executor %d differs:\n  sim    %+v\n  keeper %+v", b.Height, i, want, got)
		}
	}
	for a, s := range b.End.Agents {
		want, got := agentView{Finished: s.finished, Charged: s.charged, Stopped: s.stopped}, r.keeperAgent(a)
		if want != got {
			r.t.Fatalf("after block %d, agent %d differs:\n  sim    %+v\n  keeper %+v", b.Height, a, want, got)
		}
	}
}

// crossFigures are what the case exercised, so the test can insist it
// was eventful.
type crossFigures struct {
	starts, refused, stoppedRefusals, notRoutable, probeRefusals, probes, fallbacks int
	exclusions                                                                      [3]int // by breaker.Kind
	restores                                                                        map[breaker.Reason]int
	capRefusals, inactive, stoppedAgents, heldMisses, refunds                       int
}

// after counts the state changes between block i-1 and block i.
func (f *crossFigures) after(tape []blockTrace, i int) {
	if f.restores == nil {
		f.restores = map[breaker.Reason]int{}
	}
	now := tape[i].End
	var before snapshot
	if i > 0 {
		before = tape[i-1].End
	}
	f.inactive = 0
	for e, x := range now.Execs {
		var was execState
		if before.Execs != nil {
			was = before.Execs[e]
		}
		if d := int(x.Record.Exclusions) - int(was.Record.Exclusions); d > 0 {
			f.exclusions[x.Record.Evidence] += d
		}
		if was.Record.State != breaker.Healthy && x.Record.State == breaker.Healthy {
			f.restores[x.Record.Reason]++
		}
		f.capRefusals += max(0, int(x.Record.CapRefusals)-int(was.Record.CapRefusals))
		if x.Inactive {
			f.inactive++
		}
		if x.Held > 0 {
			f.heldMisses++
		}
	}
	for a, s := range now.Agents {
		if s.stopped && (before.Agents == nil || !before.Agents[a].stopped) {
			f.stoppedAgents++ // counts again in a later epoch: the boundary resets standings
		}
	}
}

// compareStored checks, once the run is over, what the per-block views
// summarise: every breaker record the keeper stores (whole sample windows
// and evidence ledger, through its genesis export) and the outcomes still
// queued for the next step, against the simulator's.
func (r *replay) compareStored(last *blockTrace) {
	t := r.t
	gs, err := r.k.ExportGenesis(r.tc.Ctx)
	require.NoError(t, err)
	agent := map[string]string{}
	for a := range r.agents {
		agent[agentName(r.c, a)] = r.bech(r.agents[a])
	}
	got := map[string]types.ExecutorHealth{}
	for _, h := range gs.ExecutorHealth {
		got[h.Address] = h
	}
	pending := map[string]int{}
	for _, p := range gs.PendingSamples {
		pending[p.Executor]++
	}
	for i, x := range last.End.Execs {
		addr := r.bech(r.execs[i])
		require.Equal(t, x.Pending, pending[addr], "after block %d, executor %d: queued outcomes (sim, keeper)", last.Height, i)
		h, stored := got[addr]
		require.Equal(t, x.Stored, stored, "after block %d, executor %d: has a breaker record (sim, keeper)", last.Height, i)
		if stored {
			require.Equal(t, storedView(x, addr, agent), h, "after block %d, executor %d: breaker record (sim, keeper)", last.Height, i)
		}
	}
}

// storedView is the simulator's executor as the keeper's store would hold
// it, with the simulator's agent names mapped to the agents' addresses.
func storedView(x execState, addr string, agent map[string]string) types.ExecutorHealth {
	r, l := x.Record, x.Ledger
	tw, aw, sw := r.Windows[breaker.Traffic], r.Windows[breaker.Attested], r.Windows[breaker.Service]
	h := types.ExecutorHealth{
		Address: addr, State: types.HealthState(r.State),
		Traffic:  types.SampleWindow{Bits: tw.Bits, Count: tw.Count},
		Attested: types.SampleWindow{Bits: aw.Bits, Count: aw.Count},
		Service:  types.SampleWindow{Bits: sw.Bits, Count: sw.Count},
		Evidence: types.SampleKind(r.Evidence), Reason: types.HealthReason(r.Reason),
		SinceHeight: r.Since, ExcludedAt: r.ExcludedAt, CooldownBlocks: r.Cooldown,
		Exclusions: r.Exclusions, CapRefusals: r.CapRefusals,
		TrafficOutcomes: l.Outcomes, AttestedMissAt: l.AttestedMissAt,
	}
	if x.ProbeID != 0 {
		h.ProbeInferenceId, h.ProbeAgent = inferenceID(x.ProbeID), agent[x.ProbeAgent]
	}
	for _, m := range l.Misses {
		h.RecentMisses = append(h.RecentMisses, types.TrafficMiss{
			Agent: agent[m.Agent], Outcome: m.Outcome, StartHeight: m.Start, EndHeight: m.End, Counted: m.Counted, Probe: m.Probe,
		})
	}
	for _, a := range l.AttestedCredited {
		h.AttestedCredited = append(h.AttestedCredited, agent[a])
	}
	h.ServiceOkAt, h.Overruled, h.Scopes, h.ScopedUntil = r.ServiceOKAt, r.Overruled, r.Scopes, x.Scope.Until
	for _, a := range x.Scope.Agents {
		h.ScopedAgents = append(h.ScopedAgents, agent[a])
	}
	return h
}
