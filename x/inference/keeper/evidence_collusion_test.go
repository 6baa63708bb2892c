package keeper_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/inferenced/inferenced/x/inference/types"
)

// collusion is one row of the P5 measurement.
type collusion struct {
	colluders int
	// padding is how many real (finished) inferences each colluder also
	// forwards per block, to earn miss allowance.
	padding int
	// canaries: the validators' canaries see every executor serving (every
	// bundle attests all service rates at 0%).
	canaries bool
}

// collusionResult is what the colluders achieved in one epoch and what it
// cost them.
type collusionResult struct {
	exclusions     int   // HEALTHY or PROBE -> EXCLUDED of the targets
	blocksExcluded int64 // sum over targets of blocks spent EXCLUDED
	counted        int64 // their misses counted against executors
	charged        uint64
	refused        int    // their starts refused (stopped, not routable)
	lastStopped    int64  // height at which the last colluder was stopped (0: never)
	allowance      uint64 // sum of the colluders' allowances at the end
	scoped         int    // traffic trips scoped to the colluders (EventExecutorScoped)
	inactive       int    // targets INACTIVE at the end (the SPRT)
}

// collusionInFlight is how many of a colluder's starts can be in flight
// when it is stopped: one per target per block, each charged two blocks
// after its start.
const collusionInFlight = 2 * 2

// P5: k colluding transfer agents, each bonded, coordinate misses against
// two healthy executors (the cap lets at most half the model's weight out)
// for a whole epoch of 1,000 blocks with the default cooldowns (50 doubling
// to 500), while an honest agent's traffic succeeds. Each block every
// colluder that may still start sends one start to each target it can
// reach (taking probe slots in turn) and never forwards it.
//
// What it shows: one agent alone excludes nothing (P1); two or more can
// make misses count (their one-for-one groups look like a degraded
// executor), but every such miss is charged to them, so each colluder is
// stopped after about transfer_agent_miss_allowance (10) misses plus 20% of
// what it really forwarded; their damage per epoch is bounded by the
// allowance, not by the epoch length.
//
// With the validators' canaries seeing the targets serving (S4), traffic
// evidence has one exclusion per target per epoch; after it the canaries
// restore the target at the end of its cooldown (no agent can take or
// spoil that probe) and later trips keep only the colluders off it, so
// the targets are out of the honest agent's routing for at most one
// initial cooldown each, and never INACTIVE.
func TestCollusionCostPerEpoch(t *testing.T) {
	rows := []collusion{{1, 0, false}, {2, 0, false}, {3, 0, false}, {2, 2, false}, {2, 0, true}, {2, 2, true}, {3, 2, true}}
	p := evidenceParams()
	p.EpochLength = 1000
	p.HealthCbInitialCooldownBlocks = types.DefaultHealthCBInitialCooldownBlocks
	p.HealthCbMaxCooldownBlocks = types.DefaultHealthCBMaxCooldownBlocks
	t.Logf("| colluders | real inferences each per block | canaries see the targets serving | exclusions | blocks excluded (2 targets) | scoped trips | targets INACTIVE | misses counted | misses charged | allowance | starts refused | last stopped at block | bond locked |")
	t.Logf("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
	for _, row := range rows {
		res := runCollusion(t, p, row)
		t.Logf("| %d | %d | %v | %d | %d | %d | %d | %d | %d | %d | %d | %d | %d x %s |", row.colluders, row.padding, row.canaries, res.exclusions,
			res.blocksExcluded, res.scoped, res.inactive, res.counted, res.charged, res.allowance, res.refused, res.lastStopped, row.colluders, p.TransferAgentMinBond)
		if row.canaries {
			require.LessOrEqual(t, res.blocksExcluded, int64(200), "S4: colluders kept canary-healthy targets out of the honest agent's routing")
			require.LessOrEqual(t, res.exclusions, 2, "S4: more than one exclusion per target per epoch")
			require.Zero(t, res.inactive, "S4: colluders made a canary-healthy target INACTIVE")
		}
		if row.colluders == 1 {
			require.Zero(t, res.exclusions, "P1: one agent alone excluded an executor")
			require.Zero(t, res.counted)
		}
		if row.padding == 0 {
			require.NotZero(t, res.lastStopped, "%+v: colluders never stopped", row)
		}
		// Every miss that counted was charged, and the allowance bounds
		// what was charged.
		require.LessOrEqual(t, uint64(res.counted), res.charged)
		require.LessOrEqual(t, res.charged, res.allowance+uint64(row.colluders)*(1+collusionInFlight))
	}
}

func runCollusion(t *testing.T, p types.Params, row collusion) collusionResult {
	t.Helper()
	f := newBreakerFixture(t, withParams(p))
	f.canariesServing = row.canaries
	colluders := make([]byte, row.colluders)
	for i := range colluders {
		colluders[i] = 0xC0 + byte(i)
	}
	addAgents(t, f, colluders...)
	targets := []byte{1, 2}
	var res collusionResult
	excludedSince := map[byte]int64{}
	turn := 0
	for f.height < int64(p.EpochLength) {
		f.send(agentB, 3, true)
		f.send(agentB, 4, true)
		for _, c := range colluders {
			for range row.padding {
				id := f.newID()
				if err := f.startBy(c, id, 3); err == nil {
					require.NoError(t, f.finish(3, id))
				}
			}
		}
		for _, e := range targets {
			for i := range colluders {
				c := colluders[(turn+i)%len(colluders)]
				err := f.startBy(c, f.newID(), e)
				if err != nil {
					if !errors.Is(err, types.ErrAgentStopped) && !errors.Is(err, types.ErrExecutorNotRoutable) && !errors.Is(err, types.ErrProbeTaken) {
						require.NoError(t, err)
					}
					res.refused++
				}
			}
		}
		turn++
		f.next()
		for _, ev := range typedEvents[*types.EventExecutorHealthChanged](t, f.ctx) {
			e := addrByte(t, ev.Executor)
			if ev.To == types.HEALTH_STATE_EXCLUDED {
				res.exclusions++
				excludedSince[e] = ev.Height
			}
			if ev.From == types.HEALTH_STATE_EXCLUDED {
				res.blocksExcluded += ev.Height - excludedSince[e]
			}
		}
		res.scoped += len(typedEvents[*types.EventExecutorScoped](t, f.ctx))
		for _, ev := range typedEvents[*types.EventTrafficMissCounted](t, f.ctx) {
			if ev.Agent != bech(agentB) {
				res.counted++
			}
		}
	}
	for _, e := range targets {
		if h := f.health(e); h.State == types.HEALTH_STATE_EXCLUDED {
			res.blocksExcluded += f.height - excludedSince[e]
		}
		if f.participant(e).Status == types.PARTICIPANT_STATUS_INACTIVE {
			res.inactive++
		}
	}
	allStopped := true
	for _, c := range colluders {
		st := f.standing(c).Agent.Standing
		res.charged += st.ChargedMisses
		res.allowance += p.MissAllowance(st.Finished)
		res.lastStopped = max(res.lastStopped, st.StoppedHeight)
		allStopped = allStopped && st.StoppedHeight != 0
	}
	if !allStopped {
		res.lastStopped = 0
	}
	require.Zero(t, f.standing(agentB).Agent.Standing.ChargedMisses, fmt.Sprintf("%+v: the honest agent was charged", row))
	return res
}

// TestPropertySybilAgentsCannotKeepACanaryHealthyExecutorOut (S4, attack:
// a Sybil set of bonded agents, however many, forwarding real traffic to
// earn allowance): while the validators' canaries see the targets serving,
// no random set of colluders makes a target INACTIVE or keeps it out of
// everyone's routing for more than one initial cooldown per epoch.
func TestPropertySybilAgentsCannotKeepACanaryHealthyExecutorOut(t *testing.T) {
	p := evidenceParams()
	p.EpochLength = 1000
	p.HealthCbInitialCooldownBlocks = types.DefaultHealthCBInitialCooldownBlocks
	p.HealthCbMaxCooldownBlocks = types.DefaultHealthCBMaxCooldownBlocks
	rng := rand.New(rand.NewPCG(24, 5))
	for trial := 0; trial < 3; trial++ {
		row := collusion{colluders: 2 + rng.IntN(7), padding: rng.IntN(4), canaries: true}
		res := runCollusion(t, p, row)
		t.Logf("%+v: %d exclusions, %d blocks out, %d scoped trips", row, res.exclusions, res.blocksExcluded, res.scoped)
		require.LessOrEqual(t, res.blocksExcluded, 2*int64(p.HealthCbInitialCooldownBlocks), "%+v: out past one cooldown", row)
		require.Zero(t, res.inactive, "%+v: a canary-healthy target made INACTIVE", row)
	}
}
