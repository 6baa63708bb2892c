package types_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/inferenced/inferenced/x/inference/types"
)

// healthGenesis adds an EXCLUDED record, a PROBE record with its probe and a
// pending sample to validGenesis.
func healthGenesis() types.GenesisState {
	gs := validGenesis()
	gs.Inferences[0].Executor = bech(2) // the PROBE record's probe, started at 11
	gs.Inferences = append(gs.Inferences, types.Inference{
		InferenceId: "i-2", Model: "a", TransferAgent: bech(9), Executor: bech(1),
		Status: types.INFERENCE_STATUS_EXPIRED, EpochIndex: 2, StartHeight: 10, ExpirationHeight: 20, EndHeight: 20,
	})
	gs.ExecutorHealth = []types.ExecutorHealth{
		{Address: bech(1), State: types.HEALTH_STATE_EXCLUDED, ExcludedAt: 12, SinceHeight: 12, CooldownBlocks: 50, Exclusions: 1,
			Reason: types.HEALTH_REASON_CONSECUTIVE_MISSES},
		{Address: bech(2), State: types.HEALTH_STATE_PROBE, ExcludedAt: 3, SinceHeight: 11, CooldownBlocks: 8, Exclusions: 1,
			ProbeInferenceId: "i-1", ProbeAgent: bech(9), Traffic: types.SampleWindow{Bits: 1, Count: 3},
			TrafficOutcomes: 3, AttestedMissAt: 11, RecentMisses: []types.TrafficMiss{
				{Agent: bech(9), Outcome: 1, StartHeight: 4, EndHeight: 14},
				{Agent: bech(8), Outcome: 2, StartHeight: 5, EndHeight: 15, Counted: true},
			}},
	}
	gs.PendingSamples = []types.PendingSampleEntry{{Executor: bech(1), Sequence: 4,
		Sample: types.PendingSample{InferenceId: "i-2", Miss: true, StartHeight: 10, Agent: bech(9), EndHeight: 20}}}
	gs.SampleSequence = 5
	return gs
}

func TestGenesisValidateAcceptsBreakerState(t *testing.T) {
	gs := healthGenesis()
	require.NoError(t, gs.Validate(ac))
}

// An executor that left keeps the record its departed in-flight inferences
// made until the next boundary, also once they are pruned: the export of
// that state must validate.
func TestGenesisValidateAcceptsARecordOfADepartedExecutor(t *testing.T) {
	gs := healthGenesis()
	gs.ExecutorHealth[0].Address = bech(7) // neither a participant nor an inference's executor
	require.NoError(t, gs.Validate(ac))
}

func TestGenesisValidateRejectsBadBreakerState(t *testing.T) {
	cases := []struct {
		name    string
		edit    func(*types.GenesisState)
		mention string
	}{
		{"record bad address", func(gs *types.GenesisState) { gs.ExecutorHealth[0].Address = "infer1x" }, "address"},
		{"record twice", func(gs *types.GenesisState) {
			gs.ExecutorHealth = append(gs.ExecutorHealth, gs.ExecutorHealth[0])
		}, "twice"},
		{"unknown state", func(gs *types.GenesisState) { gs.ExecutorHealth[0].State = 9 }, "unknown state"},
		{"unknown evidence", func(gs *types.GenesisState) { gs.ExecutorHealth[0].Evidence = 9 }, "unknown evidence"},
		{"unknown reason", func(gs *types.GenesisState) { gs.ExecutorHealth[0].Reason = 99 }, "unknown reason"},
		{"window over 64", func(gs *types.GenesisState) { gs.ExecutorHealth[1].Traffic.Count = 65 }, "window"},
		{"service window over 64", func(gs *types.GenesisState) { gs.ExecutorHealth[1].Service.Count = 65 }, "window"},
		{"probe slot on a service exclusion (the canaries decide it)", func(gs *types.GenesisState) {
			gs.ExecutorHealth[1].Evidence = types.SAMPLE_KIND_SERVICE
		}, "canaries decide"},
		{"scoped agents without a scoped trip", func(gs *types.GenesisState) {
			gs.ExecutorHealth[0].ScopedAgents, gs.ExecutorHealth[0].ScopedUntil = []string{bech(9)}, 40
		}, "without a scoped trip"},
		{"scoped agent twice", func(gs *types.GenesisState) {
			gs.ExecutorHealth[0].Scopes, gs.ExecutorHealth[0].ScopedAgents = 1, []string{bech(9), bech(9)}
		}, "twice"},
		{"scoped agent not an address", func(gs *types.GenesisState) {
			gs.ExecutorHealth[0].Scopes, gs.ExecutorHealth[0].ScopedAgents = 1, []string{"infer1x"}
		}, "scoped agent"},
		{"scoped until beyond the bound", func(gs *types.GenesisState) {
			gs.ExecutorHealth[0].ScopedUntil = types.MaxHealthHeight + 1
		}, "scoped_until"},
		{"excluded without cooldown", func(gs *types.GenesisState) { gs.ExecutorHealth[0].CooldownBlocks = 0 }, "cooldown"},
		{"excluded without exclusion count", func(gs *types.GenesisState) { gs.ExecutorHealth[0].Exclusions = 0 }, "exclusion"},
		{"negative height", func(gs *types.GenesisState) { gs.ExecutorHealth[0].ExcludedAt = -1 }, "heights"},
		{"height beyond the bound", func(gs *types.GenesisState) { gs.ExecutorHealth[0].ExcludedAt = types.MaxHealthHeight + 1 }, "heights"},
		{"probe that is not a started inference", func(gs *types.GenesisState) { gs.ExecutorHealth[1].ProbeInferenceId = "i-2" }, "not a STARTED inference"},
		{"probe of another executor", func(gs *types.GenesisState) {
			gs.Inferences[0].Executor = bech(1)
		}, "not a STARTED inference of this executor"},
		{"probe started before its PROBE began", func(gs *types.GenesisState) { gs.ExecutorHealth[1].SinceHeight = 12 }, "since its PROBE began"},
		{"record address in upper case", func(gs *types.GenesisState) {
			gs.ExecutorHealth[0].Address = strings.ToUpper(gs.ExecutorHealth[0].Address)
		}, "canonical"},
		{"pending sample of an open inference", func(gs *types.GenesisState) {
			gs.PendingSamples[0].Sample.InferenceId = "i-1"
		}, "not the outcome"},
		{"pending miss of a finished inference", func(gs *types.GenesisState) { gs.PendingSamples[0].Sample.Miss = false }, "not the outcome"},
		{"pending sample with another start height", func(gs *types.GenesisState) { gs.PendingSamples[0].Sample.StartHeight = 9 }, "not the outcome"},
		{"huge cooldown", func(gs *types.GenesisState) { gs.ExecutorHealth[0].CooldownBlocks = 1 << 62 }, "cooldown"},
		{"probe id outside PROBE", func(gs *types.GenesisState) { gs.ExecutorHealth[0].ProbeInferenceId = "i-1" }, "probe_inference_id"},
		{"probe without its agent", func(gs *types.GenesisState) { gs.ExecutorHealth[1].ProbeAgent = "" }, "set both or neither"},
		{"probe agent without a probe", func(gs *types.GenesisState) { gs.ExecutorHealth[0].ProbeAgent = bech(9) }, "set both or neither"},
		{"probe agent malformed", func(gs *types.GenesisState) { gs.ExecutorHealth[1].ProbeAgent = "x" }, "probe_agent"},
		// Probe hijack by id collision: another agent's inference with the
		// probe's id is not the probe.
		{"probe named by the wrong agent", func(gs *types.GenesisState) { gs.ExecutorHealth[1].ProbeAgent = bech(8) }, "not a STARTED inference"},
		{"probe id malformed", func(gs *types.GenesisState) { gs.ExecutorHealth[1].ProbeInferenceId = "a b" }, "probe_inference_id"},
		{"pending bad executor", func(gs *types.GenesisState) { gs.PendingSamples[0].Executor = "x" }, "executor"},
		{"pending non-participant", func(gs *types.GenesisState) { gs.PendingSamples[0].Executor = bech(9) }, "neither a participant"},
		{"pending twice", func(gs *types.GenesisState) {
			gs.PendingSamples = append(gs.PendingSamples, gs.PendingSamples[0])
		}, "twice"},
		{"pending at or above the sequence", func(gs *types.GenesisState) { gs.SampleSequence = 4 }, "sample_sequence"},
		{"pending bad inference id", func(gs *types.GenesisState) { gs.PendingSamples[0].Sample.InferenceId = "" }, "pending sample"},
		{"pending sample of another agent", func(gs *types.GenesisState) { gs.PendingSamples[0].Sample.Agent = bech(8) }, "not the outcome"},

		{"pending sample with another end height", func(gs *types.GenesisState) { gs.PendingSamples[0].Sample.EndHeight = 19 }, "not the outcome"},
		{"ledger agent malformed", func(gs *types.GenesisState) { gs.ExecutorHealth[1].RecentMisses[0].Agent = "x" }, "recent miss agent"},
		{"ledger miss numbered at the counter", func(gs *types.GenesisState) { gs.ExecutorHealth[1].TrafficOutcomes = 2 }, "not below traffic_outcomes"},
		{"ledger misses out of order", func(gs *types.GenesisState) { gs.ExecutorHealth[1].RecentMisses[1].Outcome = 1 }, "increase"},
		{"ledger miss older than any window", func(gs *types.GenesisState) { gs.ExecutorHealth[1].TrafficOutcomes = 100 }, "older than any window"},
		{"ledger miss ends before it starts", func(gs *types.GenesisState) { gs.ExecutorHealth[1].RecentMisses[0].EndHeight = 3 }, "heights"},
		{"ledger longer than a window", func(gs *types.GenesisState) {
			for i := range 65 {
				gs.ExecutorHealth[1].RecentMisses = append(gs.ExecutorHealth[1].RecentMisses, types.TrafficMiss{Agent: bech(9), Outcome: uint64(3 + i)})
			}
		}, "more than 64"},
		{"attested miss height negative", func(gs *types.GenesisState) { gs.ExecutorHealth[1].AttestedMissAt = -1 }, "attested_miss_at"},
		{"pending prior oks over 64", func(gs *types.GenesisState) { gs.PendingSamples[0].Sample.PriorOks = 65 }, "prior_oks"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			gs := healthGenesis()
			tc.edit(&gs)
			err := gs.Validate(ac)
			require.Error(t, err)
			require.Contains(t, err.Error(), tc.mention)
		})
	}
}

// Ids are unique per transfer agent: two agents' inferences of one id are
// two inferences, a pending sample and a probe name theirs by (agent, id),
// and only the same (agent, id) twice is a duplicate.
func TestGenesisValidateKeysInferencesByAgentAndID(t *testing.T) {
	gs := healthGenesis()
	// Agent 8 also ran "i-2" and "i-1", on other executors, finished.
	for _, inf := range gs.Inferences {
		other := inf
		other.TransferAgent, other.Executor = bech(8), bech(1)
		other.Status, other.EndHeight = types.INFERENCE_STATUS_FINISHED, other.ExpirationHeight-1
		gs.Inferences = append(gs.Inferences, other)
	}
	require.NoError(t, gs.Validate(ac), "one id under two agents")

	// The pending sample is agent 9's miss: pointing it at agent 8 (whose
	// "i-2" finished) no longer matches.
	bad := gs
	bad.PendingSamples = []types.PendingSampleEntry{gs.PendingSamples[0]}
	bad.PendingSamples[0].Sample.Agent = bech(8)
	require.ErrorContains(t, bad.Validate(ac), "not the outcome")

	// Probe hijack by id collision: agent 8's "i-1" is not agent 9's probe.
	hijack := gs
	hijack.ExecutorHealth = append([]types.ExecutorHealth(nil), gs.ExecutorHealth...)
	hijack.ExecutorHealth[1].ProbeAgent = bech(8)
	require.ErrorContains(t, hijack.Validate(ac), "not a STARTED inference")

	dup := gs
	dup.Inferences = append(append([]types.Inference(nil), gs.Inferences...), gs.Inferences[len(gs.Inferences)-1])
	require.ErrorContains(t, dup.Validate(ac), "listed twice")
}

// A closed inference needs the end height its prune height is derived
// from, and the last pruned height is a height.
func TestGenesisValidateChecksPruningInputs(t *testing.T) {
	gs := validGenesis()
	closed := gs.Inferences[0]
	closed.InferenceId, closed.Status, closed.EndHeight = "closed", types.INFERENCE_STATUS_EXPIRED, 21
	gs.Inferences = append(gs.Inferences, closed)
	gs.InferencesPrunedThrough = 5
	require.NoError(t, gs.Validate(ac))

	for name, edit := range map[string]func(*types.GenesisState){
		"closed without an end height":   func(gs *types.GenesisState) { gs.Inferences[1].EndHeight = 0 },
		"closed before it started":       func(gs *types.GenesisState) { gs.Inferences[1].EndHeight = 10 },
		"end height beyond the bound":    func(gs *types.GenesisState) { gs.Inferences[1].EndHeight = types.MaxHealthHeight + 1 },
		"negative last pruned height":    func(gs *types.GenesisState) { gs.InferencesPrunedThrough = -1 },
		"last pruned height beyond them": func(gs *types.GenesisState) { gs.InferencesPrunedThrough = types.MaxHealthHeight + 1 },
	} {
		bad := gs
		bad.Inferences = append([]types.Inference(nil), gs.Inferences...)
		edit(&bad)
		require.Error(t, bad.Validate(ac), name)
	}
}

// A probe that finished or expired in the exported block still holds its
// record's slot: its outcome is queued for the next block's step, which
// clears it. That export must validate (and import); a closed probe whose
// outcome is not queued would hold the slot for the rest of the epoch, and
// a queued outcome of another agent's inference of the same id is not it.
func TestGenesisValidateAcceptsAClosedProbeOnlyWithItsOutcomeQueued(t *testing.T) {
	closedProbe := func(status types.InferenceStatus) types.GenesisState {
		gs := healthGenesis()
		probe := &gs.Inferences[0] // the PROBE record's probe: agent 9's "i-1" on executor 2
		probe.Status, probe.EndHeight = status, 14
		gs.PendingSamples = append(gs.PendingSamples, types.PendingSampleEntry{Executor: bech(2), Sequence: 3,
			Sample: types.PendingSample{InferenceId: "i-1", Miss: status == types.INFERENCE_STATUS_EXPIRED,
				StartHeight: probe.StartHeight, Agent: bech(9), EndHeight: 14}})
		return gs
	}
	for _, status := range []types.InferenceStatus{types.INFERENCE_STATUS_FINISHED, types.INFERENCE_STATUS_EXPIRED} {
		t.Run(status.String(), func(t *testing.T) {
			gs := closedProbe(status)
			require.NoError(t, gs.Validate(ac), "closed in the exported block, outcome queued")

			unqueued := closedProbe(status)
			unqueued.PendingSamples = unqueued.PendingSamples[:1]
			require.ErrorContains(t, unqueued.Validate(ac), "nor a closed one whose outcome is queued")

			// Agent 8 also ran an "i-1" on executor 2, closed in the same
			// block: its queued outcome is not the probe's.
			other := closedProbe(status)
			twin := other.Inferences[0]
			twin.TransferAgent = bech(8)
			other.Inferences = append(other.Inferences, twin)
			other.PendingSamples[1].Sample.Agent = bech(8)
			require.ErrorContains(t, other.Validate(ac), "nor a closed one whose outcome is queued")
		})
	}
}
