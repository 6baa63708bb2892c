package sim

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"cosmossdk.io/math"
	"github.com/stretchr/testify/require"

	"github.com/cosmos/cosmos-sdk/testutil"
	sdk "github.com/cosmos/cosmos-sdk/types"

	"github.com/inferenced/inferenced/x/inference/breaker"
	"github.com/inferenced/inferenced/x/inference/keeper"
	"github.com/inferenced/inferenced/x/inference/keeper/keepertest"
	"github.com/inferenced/inferenced/x/inference/types"
	"github.com/inferenced/inferenced/x/inference/verdict"
)

// The cross-check's case: six executors of unequal weight, three honest
// agents and a griefer, four validators (one lying, one flaky), one
// 400-block epoch with the keeper fixture's 10-block expiration, and a
// plan that takes every path of the breaker at least once.
const (
	crossDark, crossDegraded, crossGriefed, crossFailing = 2, 1, 3, 4
	crossBlocks                                          = 400
)

func crossConfig() Config {
	p := types.DefaultParams()
	p.EpochLength, p.ExpirationBlocks = crossBlocks, 10
	// Short cooldowns, so an excluded executor is probed, re-excluded and
	// restored within the run. A laxer SPRT (h = 20, gonka's is 4): at 4
	// it makes the degraded executor INACTIVE before its probes have been
	// through every path; at 20 only the 90% one goes.
	p.HealthCbInitialCooldownBlocks, p.HealthCbMaxCooldownBlocks = 5, 40
	p.DowntimeHThreshold = math.LegacyNewDec(20)
	return Config{
		Seed: 10, Executors: 6, Weights: "skewed",
		Validators: 4, Flaky: 1, Byzantine: 1, FlakyPct: 10,
		Agents: 3, RequestsPerBlock: 8,
		EpochLength: crossBlocks, Epochs: 1, ExpirationBlocks: 10, Targets: 1,
		Params: p,
	}
}

// crossScenario, every executor missing 3% at random besides:
//   - executor 2 dark in blocks 60..139: attested misses exclude it, each
//     promotion to PROBE meets another attested miss, and attestation
//     restores it once it is back;
//   - executor 1 misses 80% in blocks 40..199, its health endpoint up:
//     traffic misses that pair across agents exclude it, its probes miss
//     (held, then counted with another agent's; the agent whose probe was
//     held is refused the next one) until one succeeds;
//   - executor 4 misses 90% in blocks 100..199, while 1 and 2 are out: the
//     cap keeps it in, and its counted misses make the SPRT fire;
//   - executor 3 dark in blocks 220..239 while the griefer starts two
//     inferences a block on it from block 210 and never forwards them:
//     the attested misses count its first ones (uncharged), its starts
//     are refused while 3 is excluded, and once 3 is back its misses are
//     held, charged, and stop it at the allowance's eleventh.
func crossScenario() Scenario {
	return Scenario{Name: "keeper-cross-check", plan: func(c Config, _ *rand.Rand, _ int64) Plan {
		p := newPlan(c)
		p.BaselineBP = 300
		p.Faults[crossDark] = []Fault{{From: 60, To: 140, MissBP: 10_000, Down: true}}
		p.Faults[crossDegraded] = []Fault{{From: 40, To: 200, MissBP: 8_000}}
		p.Faults[crossGriefed] = []Fault{{From: 220, To: 240, MissBP: 10_000, Down: true}}
		p.Faults[crossFailing] = []Fault{{From: 100, To: 200, MissBP: 9_000}}
		p.Grief = Grief{PerBlock: 2, Target: crossGriefed, From: 210}
		return p
	}}
}

// TestKeeperAgreesWithTheChainStrategy replays the chain strategy's run of
// the cross-check case through the real keeper, request by request: the
// same attested samples, finishes, starts (routed ones drawn by the
// keeper's RandomExecutor with the request's seed) and expiries, block by
// block. After every block each executor's breaker record (as the
// ExecutorHealth query shows it), epoch stats and status, and each agent's
// standing must be the same on both sides.
func TestKeeperAgreesWithTheChainStrategy(t *testing.T) {
	f := crossCheck(t, crossConfig(), crossScenario())
	// The case must have been eventful, or agreement proves nothing.
	require.Positive(t, f.exclusions[breaker.Attested], "no exclusion by attested evidence")
	require.Positive(t, f.exclusions[breaker.Traffic], "no exclusion by traffic evidence")
	require.Positive(t, f.probes, "no probe started")
	require.Positive(t, f.restores[breaker.ReasonProbeSucceeded], "no executor restored by its probe")
	require.Positive(t, f.restores[breaker.ReasonAttestedOK], "no executor restored by attestation")
	require.Positive(t, f.inactive, "the SPRT never fired")
	require.Positive(t, f.stoppedAgents, "no agent stopped")
	require.Positive(t, f.stoppedRefusals, "no start refused for a stopped agent")
	require.Positive(t, f.notRoutable, "no start refused as not routable")
	require.Positive(t, f.probeRefusals, "no agent refused a second probe (ProbeHeldFrom)")
	require.Positive(t, f.capRefusals, "the exclusion cap never refused")
	require.Positive(t, f.heldMisses, "no miss ever held")
	require.Positive(t, f.refunds, "no charged miss ever refunded by an attestation")
}

// TestKeeperAgreesWhenSelectionFallsBack: two executors, a cap that lets
// both be excluded, both dark in blocks 30..59. Once both are out, the
// selection falls back to the pool before the health stage, and the
// starts it routes there are accepted although their executor is
// EXCLUDED.
func TestKeeperAgreesWhenSelectionFallsBack(t *testing.T) {
	c := crossConfig()
	c.Executors, c.Weights, c.Agents, c.RequestsPerBlock = 2, "equal", 2, 4
	c.EpochLength, c.Params.EpochLength = 120, 120
	c.Params.HealthCbMaxExcludedWeightPct = 100
	f := crossCheck(t, c, Scenario{Name: "keeper-fallback", plan: func(c Config, _ *rand.Rand, _ int64) Plan {
		p := newPlan(c)
		p.Faults[0] = []Fault{{From: 30, To: 60, MissBP: 10_000, Down: true}}
		p.Faults[1] = []Fault{{From: 30, To: 60, MissBP: 10_000, Down: true}}
		return p
	}})
	require.Positive(t, f.fallbacks, "selection never fell back")
	require.Positive(t, f.exclusions[breaker.Attested], "no exclusion by attested evidence")
}

// TestKeeperAgreesAcrossAnEpochBoundary: two 100-block epochs, executor 0
// dark in blocks 80..129 of each and a griefer on executor 1 from block 70
// of each: the boundary clears the breaker, the SPRT and the agents'
// standing while inferences of the old epoch are still in flight.
func TestKeeperAgreesAcrossAnEpochBoundary(t *testing.T) {
	c := crossConfig()
	c.Executors, c.Weights, c.Agents, c.RequestsPerBlock = 4, "equal", 2, 6
	c.EpochLength, c.Params.EpochLength, c.Epochs = 100, 100, 2
	f := crossCheck(t, c, Scenario{Name: "keeper-epochs", plan: func(c Config, _ *rand.Rand, start int64) Plan {
		p := newPlan(c)
		p.Faults[0] = []Fault{{From: start + 79, To: start + 129, MissBP: 10_000, Down: true}}
		p.Grief = Grief{PerBlock: 2, Target: 1, From: start + 69}
		return p
	}})
	require.Positive(t, f.exclusions[breaker.Attested], "no exclusion by attested evidence")
	require.Equal(t, 2, f.stoppedAgents, "the griefer is stopped in each epoch (its standing resets at the boundary)")
}

// TestKeeperAgreesUnderOtherParams runs the main case again in shadow
// mode (the breaker records but does not route) and with a single
// agent's word enough to count a traffic miss.
func TestKeeperAgreesUnderOtherParams(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(*types.Params)
	}{
		{"shadow", func(p *types.Params) { p.HealthCbEnforce = false }},
		{"one-agent-evidence", func(p *types.Params) { p.HealthCbTrafficMinAgents = 1 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := crossConfig()
			tc.edit(&c.Params)
			f := crossCheck(t, c, crossScenario())
			require.Positive(t, f.exclusions[breaker.Attested]+f.exclusions[breaker.Traffic], "no exclusion")
		})
	}
}

// crossCheck records sc's run under the chain strategy, replays it
// through the keeper comparing after every block, and returns what the
// run exercised.
func crossCheck(t *testing.T, c Config, sc Scenario) crossFigures {
	t.Helper()
	tape, _, err := record(c, sc)
	require.NoError(t, err)
	r := newReplay(t, c)
	var f crossFigures
	for i := range tape {
		r.block(&tape[i], &f)
		r.compare(&tape[i])
		f.after(tape, i)
	}
	r.compareStored(&tape[len(tape)-1])
	t.Logf("%s: %d blocks, %d starts (%d drawn by the fallback; %d refused: %d agent stopped, %d not routable, %d probe refused), "+
		"exclusions %d attested / %d traffic, %d probes, restores %d by probe / %d by attestation, "+
		"%d cap refusals, %d refunds, %d INACTIVE, %d agent stops",
		sc.Name, len(tape), f.starts, f.fallbacks, f.refused, f.stoppedRefusals, f.notRoutable, f.probeRefusals,
		f.exclusions[breaker.Attested], f.exclusions[breaker.Traffic], f.probes,
		f.restores[breaker.ReasonProbeSucceeded], f.restores[breaker.ReasonAttestedOK],
		f.capRefusals, f.refunds, f.inactive, f.stoppedAgents)
	return f
}

// replay is the keeper side: a genesis with the case's executors (executor
// i at the address 0…0 | i+1, so the keeper's address order is the
// simulator's index order) and agents, and one block per traced block.
type replay struct {
	t      *testing.T
	c      Config
	k      keeper.Keeper
	q      types.QueryServer
	tc     testutil.TestContext
	execs  []sdk.AccAddress
	agents []sdk.AccAddress
	byAddr map[string]int
	window uint32
}

func newReplay(t *testing.T, c Config) *replay {
	t.Helper()
	k, tc, bank := keepertest.KeeperWithBank(t)
	params := c.Params
	params.EpochLength, params.ExpirationBlocks = uint64(c.EpochLength), uint64(c.ExpirationBlocks)
	r := &replay{t: t, c: c, k: k, q: keeper.NewQueryServerImpl(k), tc: tc,
		byAddr: map[string]int{}, window: uint32(params.HealthCbWindowSamples)}
	gs := types.DefaultGenesis()
	gs.Params = params
	for a := 0; a <= c.Agents; a++ {
		r.agents = append(r.agents, bytes.Repeat([]byte{0xA1 + byte(a)}, 20))
	}
	bonded, err := keepertest.BondedAgents(params, r.agents...)
	require.NoError(t, err)
	gs.TransferAgents = bonded
	bank.HoldBonds(bonded)
	for i, w := range c.weights() {
		a := make([]byte, 20)
		binary.BigEndian.PutUint32(a[16:], uint32(i+1))
		r.execs = append(r.execs, a)
		s := r.bech(a)
		r.byAddr[s] = i
		gs.Participants = append(gs.Participants, types.Participant{
			Address: s, InferenceUrl: "http://x.example/", Models: []string{keepertest.Model}, Weight: w,
			PocAvailable: true, Status: types.PARTICIPANT_STATUS_ACTIVE,
		})
	}
	require.NoError(t, k.InitGenesis(tc.Ctx.WithBlockHeight(0), *gs))
	tc.CMS.Commit()
	return r
}

func (r *replay) bech(a sdk.AccAddress) string {
	s, err := keepertest.AddressCodec.BytesToString(a)
	require.NoError(r.t, err)
	return s
}

func inferenceID(id uint64) string { return fmt.Sprintf("sim-%d", id) }

// block runs one traced block through the keeper as the app runs it: the
// pre-blocker maps the validators' samples and runs the breaker step, then
// BeginBlock, the block's transactions (each in its own cache, dropped if
// it fails, as a failed tx's writes are) and EndBlock; then it commits.
func (r *replay) block(b *blockTrace, f *crossFigures) {
	t := r.t
	ctx := r.tc.Ctx.WithBlockHeight(b.Height).WithEventManager(sdk.NewEventManager())
	// The bundle's votes were cast in the previous block, in its epoch.
	voted := uint64(1 + max(0, b.Height-2)/r.c.EpochLength)
	samples, err := r.k.AttestedSamples(ctx, voted, r.pack(b))
	require.NoError(t, err, "block %d: attested samples", b.Height)
	require.NoError(t, r.k.ApplyHealth(ctx, samples), "block %d: breaker step", b.Height)
	require.NoError(t, r.k.BeginBlock(ctx), "block %d: begin block", b.Height)
	var expired []string
	for _, ev := range b.Events {
		switch ev.Kind {
		case traceFinish:
			cc, write := ctx.CacheContext()
			require.NoError(t, r.k.FinishInference(cc, r.execs[ev.Exec], inferenceID(ev.ID), "cmVzcG9uc2U="),
				"block %d: finish %d on executor %d", b.Height, ev.ID, ev.Exec)
			write()
		case traceStart:
			r.start(ctx, b.Height, ev, f)
		case traceExpire:
			expired = append(expired, inferenceID(ev.ID))
		}
	}
	require.NoError(t, r.k.EndBlock(ctx), "block %d: end block", b.Height)
	var got []string
	for _, ev := range ctx.EventManager().ABCIEvents() {
		msg, err := sdk.ParseTypedEvent(ev)
		require.NoError(t, err)
		switch m := msg.(type) {
		case *types.EventInferenceExpired:
			got = append(got, m.InferenceId)
		case *types.EventTrafficMissCounted:
			if m.WasHeld && m.ByAttestation {
				f.refunds++ // an attested miss cleared a held miss its agent had been charged for
			}
		}
	}
	slices.Sort(expired)
	slices.Sort(got)
	require.Equal(t, expired, got, "block %d: expired inferences (sim, keeper)", b.Height)
	r.tc.CMS.Commit()
}

// pack is the block's health bundle: the simulator's aggregated samples
// packed as the proposer packs them (no majority: unknown).
func (r *replay) pack(b *blockTrace) []byte {
	vs := make([]verdict.Verdict, r.c.Executors)
	for _, s := range b.Attested {
		vs[s.Index] = verdict.OK
		if s.Miss {
			vs[s.Index] = verdict.Miss
		}
	}
	packed, err := verdict.Pack(vs)
	require.NoError(r.t, err)
	return packed
}

// start replays one start: a routed one is drawn by the keeper with the
// same seed and must land on the same executor; it must be accepted or
// refused as the simulator's was, and refused for the same reason.
func (r *replay) start(ctx sdk.Context, h int64, ev traceEvent, f *crossFigures) {
	t := r.t
	exec := ev.Named
	if ev.Named < 0 {
		d, err := r.k.RandomExecutor(ctx, keepertest.Model, ev.Seed, h)
		switch {
		case ev.Before.AgentStopped:
			exec = 0 // the sim does not draw for a stopped agent; the keeper refuses it before routing
			if err == nil {
				exec = r.byAddr[d.Picked.Member.Address]
			}
		case ev.Exec < 0:
			require.ErrorIs(t, err, types.ErrNoExecutor, "block %d start %d: sim drew no one", h, ev.ID)
			return
		default:
			require.NoError(t, err, "block %d start %d: draw", h, ev.ID)
			if d.Fallback {
				f.fallbacks++
			}
			require.Equal(t, ev.Exec, r.byAddr[d.Picked.Member.Address],
				"block %d start %d (seed %d): drawn executor (sim, keeper)", h, ev.ID, ev.Seed)
			exec = ev.Exec
		}
	}
	cc, write := ctx.CacheContext()
	_, err := r.k.StartInference(cc, keeper.StartRequest{
		TransferAgent: r.agents[ev.Agent], Executor: r.execs[exec], InferenceID: inferenceID(ev.ID),
		Model: keepertest.Model, PromptHash: "cHJvbXB0",
	})
	f.starts++
	if ev.Accepted {
		require.NoError(t, err, "block %d start %d by agent %d on executor %d: sim accepted it", h, ev.ID, ev.Agent, exec)
		write()
		if ev.Probe {
			f.probes++
		}
		return
	}
	require.Error(t, err, "block %d start %d by agent %d on executor %d: sim refused it", h, ev.ID, ev.Agent, exec)
	f.refused++
	rec := ev.Before.Record
	switch {
	case ev.Before.AgentStopped:
		require.ErrorIs(t, err, types.ErrAgentStopped, "block %d start %d", h, ev.ID)
		f.stoppedRefusals++
	case !ev.Before.Inactive && rec.State == breaker.Probe && !rec.ProbeInFlight:
		require.True(t, ev.Before.ProbeHeld, "block %d start %d: sim refused a free probe slot to an agent it did not hold a probe miss of", h, ev.ID)
		require.ErrorIs(t, err, types.ErrProbeTaken, "block %d start %d", h, ev.ID)
		f.probeRefusals++
	default:
		require.True(t, errors.Is(err, types.ErrExecutorNotRoutable), "block %d start %d: %v", h, ev.ID, err)
		f.notRoutable++
	}
}
