package keeper_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/inferenced/inferenced/x/inference/service"
	"github.com/inferenced/inferenced/x/inference/testutil/testkit"

	"cosmossdk.io/math"
	"github.com/cosmos/cosmos-sdk/store/v2"
	storetypes "github.com/cosmos/cosmos-sdk/store/v2/types"
	"github.com/cosmos/gogoproto/proto"
	"github.com/stretchr/testify/require"

	abci "github.com/cometbft/cometbft/abci/types"
	"github.com/cosmos/cosmos-sdk/testutil"

	sdk "github.com/cosmos/cosmos-sdk/types"
	authtypes "github.com/cosmos/cosmos-sdk/x/auth/types"

	"github.com/inferenced/inferenced/x/inference/keeper"
	"github.com/inferenced/inferenced/x/inference/routes"
	inftest "github.com/inferenced/inferenced/x/inference/testutil"
	"github.com/inferenced/inferenced/x/inference/testutil/replaylog"
	"github.com/inferenced/inferenced/x/inference/types"
)

var ac = testkit.AddressCodec

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

var addr, bech = testkit.Addr, testkit.Bech

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
	cms    store.CommitMultiStore
	bank   *inftest.Bank
	height int64
	// attested are applied by the next begin, as the block's health
	// bundle would carry them.
	attested []testkit.Attested
	// samples is what the last step was given: the packing of attested.
	samples []byte
	// applied is how many attested oks and misses the last step applied.
	applied [2]int
	// canariesServing: every block's bundle attests every member serving
	// (all service rates 0%), as the validators' canaries would for a
	// healthy group.
	canariesServing bool
	seq             int
	// startedBy is the agent of each id the fixture's helpers started
	// (ids are unique per agent; the helpers' ids are unique outright), so
	// finish and inference name the inference the test started.
	startedBy map[string]byte
	// past holds the events of the blocks before the current one.
	past []abci.Event
	// epochs are the epochs started, as each boundary stored them.
	epochs []types.Epoch
	// log records each block's store and events and each message's gas
	// when INFERENCE_REPLAY_LOG is set (replaylog).
	log *replaylog.Log
	key storetypes.StoreKey
}

type config struct {
	genesis *types.GenesisState
}

type option func(*config)

// withParticipants puts participants into the genesis.
func withParticipants(ps ...types.Participant) option {
	return func(c *config) { c.genesis.Participants = append(c.genesis.Participants, ps...) }
}

func withGenesis(gs types.GenesisState) option { return func(c *config) { *c.genesis = gs } }

func withParams(p types.Params) option { return func(c *config) { c.genesis.Params = p } }

// newKeeper builds a bare keeper on an in-memory store, with no genesis.
func newKeeper(t testing.TB) (keeper.Keeper, testutil.TestContext) {
	t.Helper()
	return inftest.Keeper(t)
}

// newFixture builds a keeper on an in-memory store, loads the genesis at
// height 0 and builds the servers.
func newFixture(t *testing.T, opts ...option) *fixture {
	t.Helper()
	cfg := config{genesis: types.DefaultGenesis()}
	cfg.genesis.Params = testParams()
	agents, err := inftest.BondedAgents(cfg.genesis.Params, addr(agentByte), addr(secondAgentByte))
	require.NoError(t, err)
	cfg.genesis.TransferAgents = agents
	for _, o := range opts {
		o(&cfg)
	}
	k, tc, bank := inftest.KeeperWithBank(t)
	bank.HoldBonds(cfg.genesis.TransferAgents)
	bank.HoldParticipantBonds(cfg.genesis.Participants)
	ctx := tc.Ctx.WithBlockHeight(0)
	require.NoError(t, k.InitGenesis(ctx, *cfg.genesis))
	log := replaylog.Open(t)
	f := &fixture{
		t: t, ctx: ctx, k: &k, cms: tc.CMS, bank: bank,
		msg: replaylog.MsgServer(log, keeper.NewMsgServerImpl(k)), query: keeper.NewQueryServerImpl(k, routes.New(k)),
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
	f.past = append(f.past, f.ctx.EventManager().ABCIEvents()...)
	f.height = h
	f.ctx = f.ctx.WithBlockHeight(h).WithEventManager(sdk.NewEventManager())
	f.applyHealth()
	require.NoError(f.t, f.k.BeginBlock(f.ctx))
	if epoch, err := f.k.Epoch.Get(f.ctx); err == nil && epoch.StartHeight == h {
		f.epochs = append(f.epochs, epoch)
	}
}

// finished and expired are the ids of the inferences finished and expired
// so far, in order (their events).
func (f *fixture) finished() []string {
	return eventIDs(f, func(ev *types.EventInferenceFinished) string { return ev.InferenceId })
}

func (f *fixture) expired() []string {
	return eventIDs(f, func(ev *types.EventInferenceExpired) string { return ev.InferenceId })
}

func eventIDs[T proto.Message](f *fixture, id func(T) string) []string {
	f.t.Helper()
	var out []string
	for _, ev := range testkit.ParseEvents[T](f.t, append(slices.Clone(f.past), f.ctx.EventManager().ABCIEvents()...)) {
		out = append(out, id(ev))
	}
	return out
}

// applyHealth runs the breaker's step as the pre-blocker does, with the
// verdicts attest queued packed by group index, as a health bundle about
// the current epoch carries them (none when nothing was attested).
func (f *fixture) applyHealth() {
	f.t.Helper()
	var epoch types.Epoch
	var packed []byte
	if len(f.attested) > 0 {
		var err error
		epoch, err = f.k.Epoch.Get(f.ctx)
		require.NoError(f.t, err, "attested samples need an epoch")
		packed = testkit.PackAttested(f.t, int(epoch.Members), func(a sdk.AccAddress) (uint32, error) {
			return f.k.EpochMemberIndex.Get(f.ctx, a)
		}, f.attested)
	}
	f.attested = nil
	var rates []byte
	if f.canariesServing {
		var err error
		epoch, err = f.k.Epoch.Get(f.ctx)
		require.NoError(f.t, err, "service rates need an epoch")
		rates, err = service.Encode(make([]service.Report, epoch.Members)) // every member at 0%
		require.NoError(f.t, err)
	}
	f.samples = packed
	oks, misses, err := f.k.ApplyHealth(f.ctx, epoch.Index, int(epoch.Members), packed, rates)
	require.NoError(f.t, err)
	f.applied = [2]int{oks, misses}
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
// (a node's query reads the last committed block instead), through route
// tables built afresh for it.
func (f *fixture) draw(model string, seed uint64) (*types.QueryGetRandomExecutorResponse, error) {
	q := keeper.NewQueryServerImpl(*f.k, routes.New(*f.k))
	resp, err := q.GetRandomExecutor(f.ctx, &types.QueryGetRandomExecutorRequest{Model: model, Seed: seed})
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
	return testkit.TypedEvents[T](t, ctx)
}

func dec(s string) math.LegacyDec { return math.LegacyMustNewDecFromStr(s) }

func mustEpoch(t *testing.T, f *fixture) types.Epoch {
	t.Helper()
	e, err := f.k.Epoch.Get(f.ctx)
	require.NoError(t, err)
	return e
}
