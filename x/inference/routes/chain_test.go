package routes_test

import (
	"fmt"
	"testing"

	"github.com/inferenced/inferenced/x/inference/testutil/testkit"

	"github.com/stretchr/testify/require"

	sdk "github.com/cosmos/cosmos-sdk/types"

	"github.com/inferenced/inferenced/x/inference/keeper"
	"github.com/inferenced/inferenced/x/inference/testutil"
	"github.com/inferenced/inferenced/x/inference/types"
)

var ac = testutil.AddressCodec

// agent is the chain's bonded transfer agent.
const agent = 0xAA

func addr(i byte) sdk.AccAddress { return testkit.Addr(i) }

func bech(_ testing.TB, i byte) string { return testkit.Bech(i) }

func breakerParams() types.Params { return testkit.BreakerParams() }

// chain drives a keeper block by block as the app does: the pre-blocker's
// breaker step (with the attested misses queued by attest), BeginBlock,
// the block's messages, EndBlock.
type chain struct {
	t        *testing.T
	k        keeper.Keeper
	ctx      sdk.Context
	bank     *testutil.Bank
	msg      types.MsgServer
	params   types.Params
	height   int64
	seq      int
	attested []testkit.Attested
}

// participant is executor i at weight, serving models, bonded for it.
func participant(t testing.TB, i byte, weight uint64, params types.Params, models ...string) types.Participant {
	return types.Participant{
		Address: bech(t, i), InferenceUrl: fmt.Sprintf("http://node-%d.example/", i), Models: models, Weight: weight,
		PocAvailable: true, Status: types.PARTICIPANT_STATUS_ACTIVE, Bond: types.BondForWeight(weight, params),
	}
}

func newChain(t *testing.T, params types.Params, participants ...types.Participant) *chain {
	k, tc, bank := testutil.KeeperWithBank(t)
	gs := types.DefaultGenesis()
	gs.Params = params
	agents, err := testutil.BondedAgents(params, addr(agent))
	require.NoError(t, err)
	gs.TransferAgents, gs.Participants = agents, participants
	bank.HoldBonds(agents)
	bank.HoldParticipantBonds(participants)
	ctx := tc.Ctx.WithBlockHeight(0)
	require.NoError(t, k.InitGenesis(ctx, *gs))
	c := &chain{t: t, k: k, ctx: ctx, bank: bank, msg: keeper.NewMsgServerImpl(k), params: params}
	c.begin(1)
	return c
}

func (c *chain) begin(h int64) {
	c.t.Helper()
	c.height = h
	c.ctx = c.ctx.WithBlockHeight(h).WithEventManager(sdk.NewEventManager())
	var epoch types.Epoch
	var packed []byte
	if len(c.attested) > 0 {
		var err error
		epoch, err = c.k.Epoch.Get(c.ctx)
		require.NoError(c.t, err)
		packed = testkit.PackAttested(c.t, int(epoch.Members), func(a sdk.AccAddress) (uint32, error) {
			return c.k.EpochMemberIndex.Get(c.ctx, a)
		}, c.attested)
	}
	c.attested = nil
	_, _, err := c.k.ApplyHealth(c.ctx, epoch.Index, int(epoch.Members), packed, nil)
	require.NoError(c.t, err)
	require.NoError(c.t, c.k.BeginBlock(c.ctx))
}

func (c *chain) end() {
	c.t.Helper()
	require.NoError(c.t, c.k.EndBlock(c.ctx))
}

// attest queues an attested miss of executor i for the next block.
func (c *chain) attest(i byte) {
	c.attested = append(c.attested, testkit.Attested{Executor: addr(i), Miss: true})
}

func (c *chain) start(executor byte, model string) (string, error) {
	c.seq++
	id := fmt.Sprintf("inf-%d", c.seq)
	_, err := c.msg.StartInference(c.ctx, &types.MsgStartInference{
		Creator: bech(c.t, agent), Executor: bech(c.t, executor), InferenceId: id, Model: model, PromptHash: "cHJvbXB0",
	})
	return id, err
}

func (c *chain) finish(executor byte, id string) error {
	_, err := c.msg.FinishInference(c.ctx, &types.MsgFinishInference{
		Creator: bech(c.t, executor), TransferAgent: bech(c.t, agent), InferenceId: id, ResponseHash: "cmVzcG9uc2U=",
	})
	return err
}

// register funds executor i with the bond weight needs and registers it.
func (c *chain) register(i byte, weight uint64, models ...string) error {
	bond := types.BondForWeight(weight, c.params)
	if bond.IsLT(c.params.ParticipantMinBond) {
		bond = c.params.ParticipantMinBond
	}
	c.bank.Fund(addr(i), bond)
	_, err := c.msg.RegisterParticipant(c.ctx, &types.MsgRegisterParticipant{
		Creator: bech(c.t, i), InferenceUrl: "http://late.example/", Models: models, Weight: weight, PocAvailable: true, Bond: bond,
	})
	return err
}

func (c *chain) status(i byte) types.ParticipantStatus {
	p, err := c.k.Participants.Get(c.ctx, addr(i))
	require.NoError(c.t, err)
	return p.Status
}

func (c *chain) setStatus(i byte, s types.ParticipantStatus) {
	p, err := c.k.Participants.Get(c.ctx, addr(i))
	require.NoError(c.t, err)
	p.Status = s
	require.NoError(c.t, c.k.Participants.Set(c.ctx, addr(i), p))
}
