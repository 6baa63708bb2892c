package sim

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/cosmos/gogoproto/proto"
	"github.com/stretchr/testify/require"

	"github.com/cosmos/cosmos-sdk/testutil"
	sdk "github.com/cosmos/cosmos-sdk/types"

	"github.com/inferenced/inferenced/x/inference/breaker"
	"github.com/inferenced/inferenced/x/inference/keeper"
	"github.com/inferenced/inferenced/x/inference/routes"
	inftest "github.com/inferenced/inferenced/x/inference/testutil"
	"github.com/inferenced/inferenced/x/inference/testutil/replaylog"
	"github.com/inferenced/inferenced/x/inference/types"
	"github.com/inferenced/inferenced/x/inference/verdict"
)

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
	// rules are the trip rules, whose windows the ExecutorHealth query counts over.
	rules breaker.Params
	log   *replaylog.Log
}

func newReplay(t *testing.T, c Config) *replay {
	t.Helper()
	k, tc, bank := inftest.KeeperWithBank(t)
	params := c.Params
	params.EpochLength, params.ExpirationBlocks = uint64(c.EpochLength), uint64(c.ExpirationBlocks)
	r := &replay{t: t, c: c, k: k, q: keeper.NewQueryServerImpl(k, routes.New(k)), tc: tc,
		byAddr: map[string]int{}, rules: params.BreakerParams()}
	gs := types.DefaultGenesis()
	gs.Params = params
	for a := 0; a < c.Agents+c.Griefers; a++ {
		r.agents = append(r.agents, bytes.Repeat([]byte{0xA1 + byte(a)}, 20))
	}
	bonded, err := inftest.BondedAgents(params, r.agents...)
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
			Address: s, InferenceUrl: "http://x.example/", Models: []string{inftest.Model}, Weight: w,
			PocAvailable: true, Status: types.PARTICIPANT_STATUS_ACTIVE, Bond: types.BondForWeight(w, params),
		})
	}
	bank.HoldParticipantBonds(gs.Participants)
	require.NoError(t, k.InitGenesis(tc.Ctx.WithBlockHeight(0), *gs))
	tc.CMS.Commit()
	r.log = replaylog.Open(t)
	return r
}

func (r *replay) bech(a sdk.AccAddress) string {
	s, err := inftest.AddressCodec.BytesToString(a)
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
	// The bundle carries the votes of the previous block, about the epoch
	// the proposer's VoteGroup names (from the state before this block).
	var voted uint64
	var members int
	var samples []byte
	if e, n, err := r.k.VoteGroup(ctx, b.Height-1); err == nil {
		voted, members, samples = e, n, r.pack(b)
	} else {
		require.ErrorIs(t, err, types.ErrNoEpoch, "block %d: vote group", b.Height)
	}
	var rates []byte
	if samples != nil {
		rates = b.Service
	}
	_, _, err := r.k.ApplyHealth(ctx, voted, members, samples, rates)
	require.NoError(t, err, "block %d: breaker step", b.Height)
	require.NoError(t, r.k.BeginBlock(ctx), "block %d: begin block", b.Height)
	var expired []string
	for _, ev := range b.Events {
		switch ev.Kind {
		case traceFinish:
			cc, write := ctx.CacheContext()
			require.NoError(t, r.log.Tx(cc, "finish "+inferenceID(ev.ID), func() error {
				return r.k.FinishInference(cc, r.execs[ev.Exec], r.agents[ev.Agent], inferenceID(ev.ID), "cmVzcG9uc2U=")
			}), "block %d: finish %d on executor %d", b.Height, ev.ID, ev.Exec)
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
		if ev.Type != expiredEvent && ev.Type != countedEvent {
			continue
		}
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
	r.log.Block(ctx, b.Height, replaylog.StoreKey(t, r.tc.CMS, types.StoreKey))
	r.tc.CMS.Commit()
}

// The events a replayed block reads.
var (
	expiredEvent = proto.MessageName(&types.EventInferenceExpired{})
	countedEvent = proto.MessageName(&types.EventTrafficMissCounted{})
)

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
		d, err := r.k.RandomExecutor(ctx, inftest.Model, ev.Seed, h)
		r.log.Note("draw %d: %s %d %d %v %v", ev.Seed, d.Picked.Member.Address, d.Candidates, d.TotalWeight, d.Fallback, err)
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
	err := r.log.Tx(cc, "start "+inferenceID(ev.ID), func() error {
		_, err := r.k.StartInference(cc, keeper.StartRequest{
			TransferAgent: r.agents[ev.Agent], Executor: r.execs[exec], InferenceID: inferenceID(ev.ID),
			Model: inftest.Model, PromptHash: "cHJvbXB0",
		})
		return err
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
