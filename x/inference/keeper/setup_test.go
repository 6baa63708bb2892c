package keeper_test

import (
	"bytes"
	"context"
	"fmt"
	"testing"

	"cosmossdk.io/math"
	"cosmossdk.io/store"
	storetypes "cosmossdk.io/store/types"
	"github.com/cosmos/gogoproto/proto"
	"github.com/stretchr/testify/require"

	addresscodec "github.com/cosmos/cosmos-sdk/codec/address"
	"github.com/cosmos/cosmos-sdk/testutil"
	sdk "github.com/cosmos/cosmos-sdk/types"
	authtypes "github.com/cosmos/cosmos-sdk/x/auth/types"

	"github.com/inferenced/inferenced/x/inference/keeper"
	"github.com/inferenced/inferenced/x/inference/keeper/keepertest"
	"github.com/inferenced/inferenced/x/inference/testutil/replaylog"
	"github.com/inferenced/inferenced/x/inference/types"
)

var ac = addresscodec.NewBech32Codec("infer")

// Test params: short epochs, a 5-block PoC phase, gonka's SPRT defaults.
const (
	testEpochLength = 50
	testPocBlocks   = 5
	testExpiration  = 10
	agentByte       = 0xAA
	// secondAgentByte is the fixture's other bonded transfer agent.
	secondAgentByte = 0xAB
	// Breaker cooldowns must stay below the epoch length.
	testInitialCooldown = 5
	testMaxCooldown     = 40
)

func testParams() types.Params {
	p := types.DefaultParams()
	p.EpochLength = testEpochLength
	p.PocPhaseBlocks = testPocBlocks
	p.ExpirationBlocks = testExpiration
	p.HealthCbInitialCooldownBlocks = testInitialCooldown
	p.HealthCbMaxCooldownBlocks = testMaxCooldown
	return p
}

func authority(t testing.TB) string {
	s, err := ac.BytesToString(authtypes.NewModuleAddress("gov"))
	require.NoError(t, err)
	return s
}

// addr is a fixed 20-byte test address.
func addr(i byte) sdk.AccAddress { return bytes.Repeat([]byte{i}, 20) }

func bech(i byte) string {
	s, err := ac.BytesToString(addr(i))
	if err != nil {
		panic(err)
	}
	return s
}

func nodeURL(i byte) string { return fmt.Sprintf("http://node-%d.example:8080/v1", i) }

// gp is a genesis participant: ACTIVE, serving models (which must be sorted).
func gp(i byte, weight uint64, poc bool, models ...string) types.Participant {
	return types.Participant{
		Address: bech(i), InferenceUrl: nodeURL(i), Models: models, Weight: weight,
		PocAvailable: poc, Status: types.PARTICIPANT_STATUS_ACTIVE, Bond: types.BondForWeight(weight, testParams()),
	}
}

// bondFor is the smallest bond a registration at weight needs: the bond
// that backs it, at least participant_min_bond.
func bondFor(weight uint64) sdk.Coin {
	p := testParams()
	b := types.BondForWeight(weight, p)
	if b.IsLT(p.ParticipantMinBond) {
		return p.ParticipantMinBond
	}
	return b
}

type fixture struct {
	t      *testing.T
	ctx    sdk.Context
	k      *keeper.Keeper
	msg    types.MsgServer
	query  types.QueryServer
	hooks  *recordingHooks
	cms    store.CommitMultiStore
	bank   *keepertest.Bank
	height int64
	// attested are applied by the next begin.
	attested []keeper.AttestedSample
	seq      int
	// startedBy is the agent of each id the fixture's helpers started
	// (ids are unique per agent; the helpers' ids are unique outright), so
	// finish and inference name the inference the test started.
	startedBy map[string]byte
	// log records each block's store and events and each message's gas
	// when INFERENCE_REPLAY_LOG is set (replaylog).
	log *replaylog.Log
	key storetypes.StoreKey
}

type config struct {
	genesis *types.GenesisState
	health  keeper.HealthStage
}

type option func(*config)

// withParticipants puts participants into the genesis.
func withParticipants(ps ...types.Participant) option {
	return func(c *config) { c.genesis.Participants = append(c.genesis.Participants, ps...) }
}

func withGenesis(gs types.GenesisState) option { return func(c *config) { *c.genesis = gs } }

func withParams(p types.Params) option { return func(c *config) { c.genesis.Params = p } }

func withHealth(h keeper.HealthStage) option { return func(c *config) { c.health = h } }

// newKeeper builds a bare keeper on an in-memory store, with no genesis.
func newKeeper(t testing.TB) (keeper.Keeper, testutil.TestContext) {
	t.Helper()
	return keepertest.Keeper(t)
}

// newFixture builds a keeper on an in-memory store, installs a recording
// hook (and a health stage if asked), loads the genesis at height 0 and
// builds the servers last, as they hold a copy of the keeper.
func newFixture(t *testing.T, opts ...option) *fixture {
	t.Helper()
	cfg := config{genesis: types.DefaultGenesis()}
	cfg.genesis.Params = testParams()
	agents, err := keepertest.BondedAgents(cfg.genesis.Params, addr(agentByte), addr(secondAgentByte))
	require.NoError(t, err)
	cfg.genesis.TransferAgents = agents
	for _, o := range opts {
		o(&cfg)
	}
	k, tc, bank := keepertest.KeeperWithBank(t)
	bank.HoldBonds(cfg.genesis.TransferAgents)
	bank.HoldParticipantBonds(cfg.genesis.Participants)
	hooks := &recordingHooks{}
	require.NoError(t, k.SetHooks(hooks))
	if cfg.health != nil {
		k.SetHealthStage(cfg.health)
	}
	ctx := tc.Ctx.WithBlockHeight(0)
	require.NoError(t, k.InitGenesis(ctx, *cfg.genesis))
	log := replaylog.Open(t)
	f := &fixture{
		t: t, ctx: ctx, k: &k, hooks: hooks, cms: tc.CMS, bank: bank,
		msg: replaylog.MsgServer(log, keeper.NewMsgServerImpl(k)), query: keeper.NewQueryServerImpl(k),
		log: log, key: replaylog.StoreKey(t, tc.CMS, types.StoreKey),
	}
	t.Cleanup(func() { f.log.Block(f.ctx, f.height, f.key) })
	return f
}

// begin starts block h with a fresh event manager and runs the breaker
// step (with the attested samples queued by attest) and BeginBlock, as the
// app's PreBlocker and BeginBlocker do.
func (f *fixture) begin(h int64) {
	f.t.Helper()
	f.log.Block(f.ctx, f.height, f.key)
	f.height = h
	f.ctx = f.ctx.WithBlockHeight(h).WithEventManager(sdk.NewEventManager())
	require.NoError(f.t, f.k.ApplyHealth(f.ctx, f.attested))
	f.attested = nil
	require.NoError(f.t, f.k.BeginBlock(f.ctx))
}

func (f *fixture) end() {
	f.t.Helper()
	require.NoError(f.t, f.k.EndBlock(f.ctx))
}

// block runs a whole block with no transactions.
func (f *fixture) block(h int64) {
	f.t.Helper()
	f.begin(h)
	f.end()
}

// advanceTo runs empty blocks after the current one up to and including h.
func (f *fixture) advanceTo(h int64) {
	f.t.Helper()
	for next := f.height + 1; next <= h; next++ {
		f.block(next)
	}
}

// register funds addr(i) with the bond weight needs and registers it.
func (f *fixture) register(i byte, weight uint64, poc bool, models ...string) error {
	bond := bondFor(weight)
	f.bank.Fund(addr(i), bond)
	_, err := f.msg.RegisterParticipant(f.ctx, &types.MsgRegisterParticipant{
		Creator: bech(i), InferenceUrl: nodeURL(i), Models: models, Weight: weight, PocAvailable: poc, Bond: bond,
	})
	return err
}

// start starts an inference as the fixture's first transfer agent.
func (f *fixture) start(id string, executor byte, model string) (int64, error) {
	return f.startAs(agentByte, id, executor, model)
}

// startAs starts an inference as the transfer agent agent.
func (f *fixture) startAs(agent byte, id string, executor byte, model string) (int64, error) {
	resp, err := f.msg.StartInference(f.ctx, &types.MsgStartInference{
		Creator: bech(agent), Executor: bech(executor), InferenceId: id, Model: model, PromptHash: "cHJvbXB0",
	})
	if err != nil {
		return 0, err
	}
	f.noteStart(agent, id)
	return resp.ExpirationHeight, nil
}

func (f *fixture) mustStart(id string, executor byte, model string) int64 {
	f.t.Helper()
	exp, err := f.start(id, executor, model)
	require.NoError(f.t, err)
	return exp
}

// noteStart records that agent started id.
func (f *fixture) noteStart(agent byte, id string) {
	if f.startedBy == nil {
		f.startedBy = map[string]byte{}
	}
	f.startedBy[id] = agent
}

// agentOf is the agent that started id through the fixture (the first
// agent if none did).
func (f *fixture) agentOf(id string) byte {
	if a, ok := f.startedBy[id]; ok {
		return a
	}
	return agentByte
}

// finish finishes, as signer, the inference id the fixture started.
func (f *fixture) finish(signer byte, id string) error {
	return f.finishOf(signer, f.agentOf(id), id)
}

// finishOf finishes, as signer, agent's inference id.
func (f *fixture) finishOf(signer, agent byte, id string) error {
	_, err := f.msg.FinishInference(f.ctx, &types.MsgFinishInference{
		Creator: bech(signer), TransferAgent: bech(agent), InferenceId: id, ResponseHash: "cmVzcG9uc2U=",
	})
	return err
}

func (f *fixture) participant(i byte) types.Participant {
	f.t.Helper()
	p, err := f.k.Participants.Get(f.ctx, addr(i))
	require.NoError(f.t, err)
	return p
}

func (f *fixture) setStatus(i byte, s types.ParticipantStatus) {
	f.t.Helper()
	p := f.participant(i)
	p.Status = s
	require.NoError(f.t, f.k.Participants.Set(f.ctx, addr(i), p))
}

// inference is the inference id the fixture started.
func (f *fixture) inference(id string) types.Inference {
	f.t.Helper()
	inf, err := f.k.Inference(f.ctx, addr(f.agentOf(id)), id)
	require.NoError(f.t, err)
	return inf
}

func (f *fixture) group() types.EpochGroup {
	f.t.Helper()
	g, err := f.k.EpochGroup(f.ctx)
	require.NoError(f.t, err)
	return g
}

// draw queries GetRandomExecutor on the state so far in the current block
// (a node's query reads the last committed block instead).
func (f *fixture) draw(model string, seed uint64) (*types.QueryGetRandomExecutorResponse, error) {
	f.k.ForgetRouteTables()
	resp, err := f.query.GetRandomExecutor(f.ctx, &types.QueryGetRandomExecutorRequest{Model: model, Seed: seed})
	if err != nil {
		f.log.Note("draw %s %d: %v", model, seed, err)
	} else {
		f.log.Note("draw %s %d: %s", model, seed, resp.String())
	}
	return resp, err
}

// memberAddrs lists the group's member addresses in index order.
func memberAddrs(g types.EpochGroup) []string {
	out := make([]string, len(g.Members))
	for i, m := range g.Members {
		out[i] = m.Address
	}
	return out
}

// typedEvents returns the typed events of type T emitted on ctx so far.
func typedEvents[T proto.Message](t testing.TB, ctx sdk.Context) []T {
	t.Helper()
	var zero T
	name := proto.MessageName(zero)
	var out []T
	for _, ev := range ctx.EventManager().ABCIEvents() {
		if ev.Type != name {
			continue
		}
		msg, err := sdk.ParseTypedEvent(ev)
		require.NoError(t, err)
		out = append(out, msg.(T))
	}
	return out
}

func dec(s string) math.LegacyDec { return math.LegacyMustNewDecFromStr(s) }

// recordingHooks records every hook call; err, if set, is returned by all.
type recordingHooks struct {
	epochs   []types.Epoch
	finished []string
	expired  []string
	err      error
}

var _ types.InferenceHooks = (*recordingHooks)(nil)

func (h *recordingHooks) AfterInferenceFinished(_ context.Context, inf types.Inference) error {
	h.finished = append(h.finished, inf.InferenceId)
	return h.err
}

func (h *recordingHooks) AfterInferenceExpired(_ context.Context, inf types.Inference) error {
	h.expired = append(h.expired, inf.InferenceId)
	return h.err
}

func (h *recordingHooks) AfterEpochStarted(_ context.Context, e types.Epoch) error {
	h.epochs = append(h.epochs, e)
	return h.err
}

// fakeHealth is a configurable HealthStage; nil funcs admit everything.
type fakeHealth struct {
	filter func([]types.Candidate) []types.Candidate
	check  func(sdk.AccAddress) error
	calls  int
}

var _ keeper.HealthStage = (*fakeHealth)(nil)

func (h *fakeHealth) Filter(_ context.Context, _ int64, pool []types.Candidate) ([]types.Candidate, error) {
	h.calls++
	if h.filter == nil {
		return pool, nil
	}
	return h.filter(pool), nil
}

func (h *fakeHealth) CheckStart(_ context.Context, executor sdk.AccAddress, _ string) error {
	if h.check == nil {
		return nil
	}
	return h.check(executor)
}

func mustEpoch(t *testing.T, f *fixture) types.Epoch {
	t.Helper()
	e, err := f.k.Epoch.Get(f.ctx)
	require.NoError(t, err)
	return e
}
