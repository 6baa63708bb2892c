package keeper_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"cosmossdk.io/collections"
	storetypes "github.com/cosmos/cosmos-sdk/store/v2/types"
	"github.com/stretchr/testify/require"

	"github.com/inferenced/inferenced/x/inference/types"
)

// standingOp is one standing transition of the fixture's first agent.
type standingOp func(f *fixture) error

var (
	opStart    standingOp = func(f *fixture) error { return f.k.Agents().Starting(f.ctx, addr(agentByte)) }
	opFinish   standingOp = func(f *fixture) error { return f.k.Agents().Finished(f.ctx, bech(agentByte)) }
	opCharge   standingOp = func(f *fixture) error { return f.k.Agents().Judged(f.ctx, bech(agentByte), +1, false) }
	opRefund   standingOp = func(f *fixture) error { return f.k.Agents().Judged(f.ctx, bech(agentByte), -1, true) }
	opCorrob   standingOp = func(f *fixture) error { return f.k.Agents().Judged(f.ctx, bech(agentByte), 0, true) }
	repeatedOp            = func(n int, op standingOp) []standingOp {
		out := make([]standingOp, n)
		for i := range out {
			out[i] = op
		}
		return out
	}
)

func concat(parts ...[]standingOp) []standingOp {
	var out []standingOp
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// The standing state machine, from a fresh standing in epoch 1 (default
// allowance: 10 + 10% of finished).
func TestAgentStandingTransitions(t *testing.T) {
	const h = 7 // the block the ops run in
	for _, tc := range []struct {
		name string
		ops  []standingOp
		want types.AgentStanding
	}{
		{"starts and finishes are counted", concat(repeatedOp(3, opStart), repeatedOp(2, opFinish)),
			types.AgentStanding{Starts: 3, Finished: 2}},
		{"misses up to the allowance do not stop", repeatedOp(10, opCharge),
			types.AgentStanding{ChargedMisses: 10}},
		{"the miss over the allowance stops", repeatedOp(11, opCharge),
			types.AgentStanding{ChargedMisses: 11, StoppedHeight: h}},
		{"finished inferences raise the allowance", concat(repeatedOp(20, opFinish), repeatedOp(12, opCharge)),
			types.AgentStanding{Finished: 20, ChargedMisses: 12}},
		{"a refund turns a charge into a corroborated miss", concat(repeatedOp(2, opCharge), []standingOp{opRefund}),
			types.AgentStanding{ChargedMisses: 1, CorroboratedMisses: 1}},
		{"a refund never goes below zero", []standingOp{opRefund},
			types.AgentStanding{CorroboratedMisses: 1}},
		{"refunds keep an agent under its allowance", concat(repeatedOp(10, opCharge), []standingOp{opRefund, opCharge}),
			types.AgentStanding{ChargedMisses: 10, CorroboratedMisses: 1}},
		{"corroborated misses are never charged", repeatedOp(30, opCorrob),
			types.AgentStanding{CorroboratedMisses: 30}},
		{"a refund does not un-stop", concat(repeatedOp(11, opCharge), repeatedOp(5, opRefund)),
			types.AgentStanding{ChargedMisses: 6, CorroboratedMisses: 5, StoppedHeight: h}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			f.block(1)
			f.begin(h)
			for i, op := range tc.ops {
				require.NoError(t, op(f), "op %d", i)
			}
			tc.want.EpochIndex = 1
			require.Equal(t, tc.want, f.agent(agentByte).Standing)
			require.Equal(t, types.AgentStanding{EpochIndex: 0}, f.agent(secondAgentByte).Standing, "the other agent is untouched")
		})
	}
}

func TestStoppedAgentStaysStoppedForTheEpochAndResumesNext(t *testing.T) {
	f := newFixture(t)
	f.block(1)
	f.begin(9)
	for range 10 {
		require.NoError(t, f.k.Agents().Judged(f.ctx, bech(agentByte), +1, false))
	}
	require.Empty(t, typedEvents[*types.EventTransferAgentStopped](t, f.ctx))
	require.NoError(t, f.k.Agents().Starting(f.ctx, addr(agentByte)), "at its allowance it still starts")
	require.NoError(t, f.k.Agents().Judged(f.ctx, bech(agentByte), +1, false))
	require.Equal(t, []*types.EventTransferAgentStopped{{
		Agent: bech(agentByte), EpochIndex: 1, ChargedMisses: 11, MissAllowance: 10, Height: 9,
	}}, typedEvents[*types.EventTransferAgentStopped](t, f.ctx))
	require.NoError(t, f.k.Agents().Judged(f.ctx, bech(agentByte), +1, false))
	require.Len(t, typedEvents[*types.EventTransferAgentStopped](t, f.ctx), 1, "stopped once")
	f.end()

	for _, h := range []int64{10, 30, testEpochLength} {
		f.advanceTo(h)
		err := f.k.Agents().Starting(f.ctx, addr(agentByte))
		require.ErrorIs(t, err, types.ErrAgentStopped, "height %d", h)
		now := f.agent(agentByte).Standing
		require.Contains(t, err.Error(), fmt.Sprintf("%d charged misses (no attestation backed them) this epoch, over its allowance of %d (10 + 20%% of its %d finished",
			now.ChargedMisses, 10+now.Finished/10, now.Finished))
		require.Contains(t, err.Error(), fmt.Sprintf("epoch 2 starts at height %d", testEpochLength+1))
		// Finishing more does not lift the stop either.
		require.NoError(t, f.k.Agents().Finished(f.ctx, bech(agentByte)))
		require.NoError(t, f.k.Agents().Judged(f.ctx, bech(agentByte), -1, true))
	}
	require.NoError(t, f.k.Agents().Starting(f.ctx, addr(secondAgentByte)), "another agent is not affected")

	f.advanceTo(testEpochLength + 1)
	require.NoError(t, f.k.Agents().Starting(f.ctx, addr(agentByte)), "the next epoch starts clean")
	require.Equal(t, types.AgentStanding{EpochIndex: 2, Starts: 1}, f.agent(agentByte).Standing)
}

func TestStandingOfStaleEpochReadsZero(t *testing.T) {
	f := newFixture(t)
	f.block(1)
	f.begin(2)
	for _, op := range concat(repeatedOp(4, opStart), repeatedOp(2, opFinish), repeatedOp(11, opCharge), []standingOp{opCorrob}) {
		require.NoError(t, op(f))
	}
	f.end()
	stale := f.agent(agentByte).Standing
	require.NotZero(t, stale.StoppedHeight)

	f.advanceTo(testEpochLength + 1)
	require.Equal(t, stale, f.agent(agentByte).Standing, "the boundary does not walk the agents: the record is untouched")
	resp, err := f.query.TransferAgent(f.ctx, &types.QueryTransferAgentRequest{Address: bech(agentByte)})
	require.NoError(t, err)
	require.Equal(t, types.AgentStanding{EpochIndex: 2}, resp.Agent.Agent.Standing, "read as zero")
	require.True(t, resp.Agent.MayStart)
	require.Equal(t, uint64(10), resp.Agent.MissAllowance)

	// The first write of the new epoch starts from zero, whatever it is.
	require.NoError(t, f.k.Agents().Judged(f.ctx, bech(agentByte), +1, false))
	require.Equal(t, types.AgentStanding{EpochIndex: 2, ChargedMisses: 1}, f.agent(agentByte).Standing)
}

// An inference outlives an agent that left: its outcomes find no agent,
// which is not an error.
func TestStandingOfAnAgentThatLeftIsANoOp(t *testing.T) {
	f := newFixture(t)
	f.block(1)
	gone := bech(newAgentByte)
	judged := func(charge int, corroborated bool) func(context.Context, string) error {
		return func(ctx context.Context, agent string) error {
			return f.k.Agents().Judged(ctx, agent, charge, corroborated)
		}
	}
	for name, op := range map[string]func(ctx context.Context, agent string) error{
		"finished": f.k.Agents().Finished, "charge": judged(+1, false), "refund": judged(-1, true), "corroborated": judged(0, true),
	} {
		require.NoError(t, op(f.ctx, gone), name)
		require.Error(t, op(f.ctx, "infer1bad"), "%s: a malformed address is an error", name)
	}
	_, err := f.k.Agents().Get(f.ctx, addr(newAgentByte))
	require.ErrorIs(t, err, collections.ErrNotFound, "nothing is created")
}

func TestUnregisteredAgentStartingSaysHowToRegister(t *testing.T) {
	f := newFixture(t)
	f.block(1)
	err := f.k.Agents().Starting(f.ctx, addr(newAgentByte))
	require.ErrorIs(t, err, types.ErrNotTransferAgent)
	require.Contains(t, err.Error(), "register-transfer-agent")
	require.Contains(t, err.Error(), minBond.String())
}

// An honest agent at gonka's 3.25% baseline miss rate, over ten epochs of
// steady traffic (20 inferences a block), is never stopped, even when none
// of its misses is ever corroborated (each is charged). Misses are drawn
// from a fixed seed, so bursts happen as they would.
func TestHonestAgentAtBaselineMissRateIsNeverStopped(t *testing.T) {
	const (
		perBlock   = 20
		epochs     = 10
		missPer10k = 325
	)
	rng := rand.New(rand.NewPCG(10, 325))
	f := newFixture(t)
	f.block(1)
	misses, maxMisses := 0, uint64(0)
	for h := int64(2); h <= epochs*testEpochLength; h++ {
		f.begin(h)
		for range perBlock {
			require.NoError(t, f.k.Agents().Starting(f.ctx, addr(agentByte)), "height %d", h)
			if rng.IntN(10_000) < missPer10k {
				misses++
				require.NoError(t, f.k.Agents().Judged(f.ctx, bech(agentByte), +1, false))
			} else {
				require.NoError(t, f.k.Agents().Finished(f.ctx, bech(agentByte)))
			}
		}
		f.end()
		s := f.agent(agentByte).Standing
		require.Zero(t, s.StoppedHeight, "height %d: %+v", h, s)
		maxMisses = max(maxMisses, s.ChargedMisses)
	}
	require.Equal(t, uint64(epochs), mustEpoch(t, f).Index)
	t.Logf("%d misses in %d inferences; at most %d charged in one epoch", misses, (epochs*testEpochLength-1)*perBlock, maxMisses)
}

// Attack: an unregistered account spams starts. Each refusal costs two
// reads (the missing agent key, and the params to explain it) and writes
// nothing, so spam buys the chain no work beyond the failed tx; an admitted
// start adds one agent record read and write. Measured: 2,420 and 7,006
// store gas.
func TestAttackUnregisteredStartSpamIsRefusedCheaply(t *testing.T) {
	f := newFixture(t)
	f.block(1)
	f.ctx = f.ctx.WithGasMeter(storetypes.NewInfiniteGasMeter())
	gas := func(op func() error) (uint64, error) {
		before := f.ctx.GasMeter().GasConsumed()
		err := op()
		return f.ctx.GasMeter().GasConsumed() - before, err
	}
	refused, err := gas(func() error { return f.k.Agents().Starting(f.ctx, addr(newAgentByte)) })
	require.ErrorIs(t, err, types.ErrNotTransferAgent)
	admitted, err := gas(func() error { return f.k.Agents().Starting(f.ctx, addr(agentByte)) })
	require.NoError(t, err)
	t.Logf("store gas: refused %d, admitted %d", refused, admitted)
	require.Less(t, refused, uint64(5_000))
	require.Less(t, admitted, uint64(10_000))
}
