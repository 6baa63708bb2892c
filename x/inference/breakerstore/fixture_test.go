package breakerstore_test

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/inferenced/inferenced/x/inference/testutil/testkit"

	"cosmossdk.io/collections"
	storetypes "github.com/cosmos/cosmos-sdk/store/v2/types"
	"github.com/cosmos/gogoproto/proto"
	"github.com/stretchr/testify/require"

	"github.com/cosmos/cosmos-sdk/codec"
	codectypes "github.com/cosmos/cosmos-sdk/codec/types"
	"github.com/cosmos/cosmos-sdk/runtime"
	"github.com/cosmos/cosmos-sdk/testutil"
	sdk "github.com/cosmos/cosmos-sdk/types"

	"github.com/inferenced/inferenced/x/inference/breakerstore"
	"github.com/inferenced/inferenced/x/inference/judge"
	"github.com/inferenced/inferenced/x/inference/selection"
	"github.com/inferenced/inferenced/x/inference/service"
	"github.com/inferenced/inferenced/x/inference/types"
)

// The breaker's tests drive breakerstore.Store through whole blocks as the
// keeper does, with no keeper: this fixture keeps the rest of the module in
// memory (the epoch group, each executor's stats, the inferences in flight)
// and calls the store where the keeper would: QueueOutcome on a finish and
// an expiry, CheckStart and ClaimProbe on a start, Step at the start of a
// block (then the SPRT counts of the miss verdicts it returns), Clear at the
// epoch boundary, Filter in selection.

var ac = testkit.AddressCodec

// The breaker tests' params (testkit.BreakerParams): no PoC phase,
// inferences expire after one block so a miss lands two blocks after its
// start, cooldowns 5 doubling up to 20, the seed's trip rule for both
// sample kinds, and one agent's misses trusted.
const (
	bInitial = testkit.BreakerInitialCooldown
	bMax     = testkit.BreakerMaxCooldown
)

func breakerParams() types.Params { return testkit.BreakerParams() }

const agentByte = 0xAA

var addr, bech = testkit.Addr, testkit.Bech

type fixture struct {
	t          *testing.T
	s          breakerstore.Store
	ctx        sdk.Context
	params     types.Params
	group      *group
	height     int64
	epoch      types.Epoch
	seq        int
	inferences map[string]*types.Inference // by id (the fixture's ids are unique)
	attested   []testkit.Attested
	// rates, when set, are the next block's attested service rates by
	// executor byte (members not in it at 0%).
	rates   map[byte]service.Report
	applied breakerstore.Applied
}

type member struct {
	i      byte
	weight uint64
	models []string
}

// newBreakerFixture: executors 1-4 of weight 10 serve "m", and any more
// given; block 1 has begun.
func newBreakerFixture(t *testing.T, p types.Params, more ...member) *fixture {
	t.Helper()
	key := storetypes.NewKVStoreKey(types.StoreKey)
	tc := testutil.DefaultContextWithDB(t, key, storetypes.NewTransientStoreKey("transient_test"))
	sb := collections.NewSchemaBuilder(runtime.NewKVStoreService(key))
	g := &group{}
	s := breakerstore.NewStore(sb, codec.NewProtoCodec(codectypes.NewInterfaceRegistry()), ac, g)
	_, err := sb.Build()
	require.NoError(t, err)
	members := append([]member{{1, 10, []string{"m"}}, {2, 10, []string{"m"}}, {3, 10, []string{"m"}}, {4, 10, []string{"m"}}}, more...)
	for _, m := range members {
		g.execs = append(g.execs, &executor{member: types.EpochMember{
			Address: bech(m.i), Weight: m.weight, Models: m.models, InferenceUrl: "http://e.example/", PocAvailable: true,
		}})
	}
	slices.SortFunc(g.execs, func(a, b *executor) int {
		x, _ := ac.StringToBytes(a.member.Address)
		y, _ := ac.StringToBytes(b.member.Address)
		return bytes.Compare(x, y)
	})
	f := &fixture{t: t, s: s, ctx: tc.Ctx, params: p, group: g, inferences: map[string]*types.Inference{}}
	f.begin(1)
	return f
}

// begin starts block h as the app does: the breaker's step with the
// attested samples queued by attest (and the SPRT counts of the misses it
// judged), then the epoch boundary, which clears the breaker.
func (f *fixture) begin(h int64) {
	f.t.Helper()
	f.height = h
	f.ctx = f.ctx.WithBlockHeight(h).WithEventManager(sdk.NewEventManager())
	var att breakerstore.Attestation
	if len(f.attested) > 0 {
		index := func(a sdk.AccAddress) (uint32, error) {
			i, ok, err := f.group.MemberIndex(f.ctx, a)
			if err == nil && !ok {
				err = collections.ErrNotFound
			}
			return i, err
		}
		att = breakerstore.Attestation{Members: len(f.group.execs), Samples: testkit.PackAttested(f.t, len(f.group.execs), index, f.attested)}
	}
	f.attested = nil
	if f.rates != nil {
		att.Members, att.Service = len(f.group.execs), f.encodedRates()
		f.rates = nil
	}
	applied, err := f.s.Step(f.ctx, breakerstore.Block{Params: f.params, Attested: att})
	require.NoError(f.t, err)
	f.applied = applied
	for _, v := range applied.Misses {
		if v.Effect.Kind == judge.Counted {
			if e := f.group.find(v.Executor); e != nil {
				e.missed++
			}
		}
	}
	if f.epoch.Index == 0 || h >= f.params.NextEpochHeight(f.epoch) {
		f.epoch = types.Epoch{Index: f.epoch.Index + 1, StartHeight: h, Members: uint32(len(f.group.execs))}
		require.NoError(f.t, f.s.Clear(f.ctx))
		f.group.epoch = f.epoch.Index
		for _, e := range f.group.execs {
			e.finished, e.missed = 0, 0
		}
	}
}

// end expires the inferences due at this height, in the keeper's order
// (expiration height, id, agent), queueing a miss for each.
func (f *fixture) end() {
	f.t.Helper()
	var due []*types.Inference
	for _, inf := range f.inferences {
		if inf.Status == types.INFERENCE_STATUS_STARTED && inf.ExpirationHeight <= f.height {
			due = append(due, inf)
		}
	}
	slices.SortFunc(due, func(a, b *types.Inference) int {
		return cmp.Or(cmp.Compare(a.ExpirationHeight, b.ExpirationHeight), cmp.Compare(a.InferenceId, b.InferenceId))
	})
	for _, inf := range due {
		inf.Status, inf.EndHeight = types.INFERENCE_STATUS_EXPIRED, f.height
		require.NoError(f.t, f.s.QueueOutcome(f.ctx, *inf, true))
	}
}

func (f *fixture) next() {
	f.t.Helper()
	f.end()
	f.begin(f.height + 1)
}

func (f *fixture) advanceTo(h int64) {
	f.t.Helper()
	for f.height < h {
		f.next()
	}
}

func (f *fixture) newID() string {
	f.seq++
	return fmt.Sprintf("inf-%d", f.seq)
}

// start starts an inference as the keeper does: a member serving model,
// the breaker's start rule (a refusal stands unless every candidate is out:
// the fallback), then the probe slot. Shadow mode asks the breaker nothing.
func (f *fixture) start(id string, executor byte, model string) (int64, error) {
	if err := f.startBy(agentByte, id, executor, model); err != nil {
		return 0, err
	}
	return f.inferences[id].ExpirationHeight, nil
}

func (f *fixture) startBy(agent byte, id string, executor byte, model string) error {
	e := f.group.find(addr(executor))
	if e == nil || !slices.Contains(e.member.Models, model) {
		return fmt.Errorf("%w: %d does not serve %q", types.ErrExecutorNotRoutable, executor, model)
	}
	if f.params.HealthCbEnforce {
		if err := f.s.CheckStart(f.ctx, addr(executor)); err != nil {
			if !errors.Is(err, types.ErrExecutorNotRoutable) {
				return err
			}
			if sel := f.selection(model, f.height); !sel.Fallback {
				return err
			}
		}
	}
	inf := &types.Inference{
		InferenceId: id, Model: model, TransferAgent: bech(agent), Executor: bech(executor), Status: types.INFERENCE_STATUS_STARTED,
		EpochIndex: f.epoch.Index, StartHeight: f.height, ExpirationHeight: f.height + int64(f.params.ExpirationBlocks),
	}
	if err := f.s.ClaimProbe(f.ctx, addr(executor), bech(agent), id); err != nil {
		if !errors.Is(err, types.ErrProbeTaken) || f.params.HealthCbEnforce {
			return err
		}
	}
	f.inferences[id] = inf
	return nil
}

func (f *fixture) mustStart(id string, executor byte, model string) int64 {
	f.t.Helper()
	exp, err := f.start(id, executor, model)
	require.NoError(f.t, err)
	return exp
}

// finish finishes the inference id as its executor: a success counted in
// the executor's stats and queued for the breaker.
func (f *fixture) finish(executor byte, id string) error {
	inf, ok := f.inferences[id]
	switch {
	case !ok:
		return fmt.Errorf("%w: %q", types.ErrInferenceNotFound, id)
	case inf.Executor != bech(executor):
		return fmt.Errorf("%w: %q", types.ErrNotExecutor, id)
	case inf.Status != types.INFERENCE_STATUS_STARTED:
		return fmt.Errorf("%w: %q", types.ErrInferenceNotStarted, id)
	}
	inf.Status, inf.EndHeight = types.INFERENCE_STATUS_FINISHED, f.height
	f.group.find(addr(executor)).finished++
	return f.s.QueueOutcome(f.ctx, *inf, false)
}

// feed sends executor one inference per sample ('o' finishes in its block,
// 'm' is never finished and expires), each applied before the next starts.
func (f *fixture) feed(executor byte, pattern string) {
	f.t.Helper()
	testkit.Feed(pattern, func(ok bool) {
		id := f.newID()
		f.mustStart(id, executor, "m")
		if ok {
			require.NoError(f.t, f.finish(executor, id))
		}
	}, f.next)
}

// attest queues an attested sample for the next block's step.
func (f *fixture) attest(i byte, miss bool) {
	f.attested = append(f.attested, testkit.Attested{Executor: addr(i), Miss: miss})
}

// health is executor i's breaker state as the ExecutorHealth query shows it.
func (f *fixture) health(i byte) types.HealthStatus {
	f.t.Helper()
	st, err := f.s.Status(f.ctx, addr(i), f.params.BreakerParams())
	require.NoError(f.t, err)
	return st
}

// finished and missed are executor i's epoch stats (InferenceCount,
// MissedRequests), as the keeper counts them.
func (f *fixture) finished(i byte) uint64 { return f.group.find(addr(i)).finished }

func (f *fixture) missed(i byte) uint64 { return f.group.find(addr(i)).missed }

// selection is the filter chain for model at height, as the keeper runs it
// (every member ACTIVE, no PoC phase in these params).
func (f *fixture) selection(model string, height int64) selection.Selection {
	f.t.Helper()
	var pool []types.Candidate
	for _, e := range f.group.execs {
		if slices.Contains(e.member.Models, model) && e.member.Weight > 0 {
			pool = append(pool, types.Candidate{Member: e.member, Weight: e.member.Weight})
		}
	}
	var filter selection.Filter
	if f.params.HealthCbEnforce {
		filter = func(p []types.Candidate) ([]types.Candidate, error) { return f.s.Filter(f.ctx, height, p) }
	}
	sel, err := selection.Health(model, pool, filter)
	require.NoError(f.t, err)
	return sel
}

// draw is GetRandomExecutor answered from this block's state for a start in
// the next one.
func (f *fixture) draw(model string, seed uint64) *types.QueryGetRandomExecutorResponse {
	f.t.Helper()
	d, err := selection.DrawFrom(f.selection(model, f.height+1), seed)
	require.NoError(f.t, err)
	return &types.QueryGetRandomExecutorResponse{
		Executor: d.Picked.Member, Candidates: uint32(d.Candidates), TotalWeight: d.TotalWeight,
		HealthFallback: d.Fallback, Probe: d.Picked.Probe,
	}
}

// offered counts, over seeds [0, n), how often each executor is drawn.
func (f *fixture) offered(n uint64) map[string]int {
	out := map[string]int{}
	for seed := range n {
		out[f.draw("m", seed).Executor.Address]++
	}
	return out
}

// drawUntil draws with increasing seeds until executor i is picked.
func (f *fixture) drawUntil(i byte) *types.QueryGetRandomExecutorResponse {
	f.t.Helper()
	for seed := range uint64(10_000) {
		if resp := f.draw("m", seed); resp.Executor.Address == bech(i) {
			return resp
		}
	}
	require.FailNow(f.t, "executor never drawn", "executor %d", i)
	return nil
}

// runUntil runs blocks until cond holds, at most limit blocks.
func (f *fixture) runUntil(limit int, cond func() bool) {
	f.t.Helper()
	for range limit {
		if cond() {
			return
		}
		f.next()
	}
	require.True(f.t, cond(), "condition not reached within %d blocks (height %d)", limit, f.height)
}

// notHealthy is the ExcludedExecutors query's answer.
func (f *fixture) notHealthy() []types.HealthStatus {
	f.t.Helper()
	out, _, err := f.s.NotHealthy(f.ctx, nil, f.params.BreakerParams())
	require.NoError(f.t, err)
	return out
}

// census is the store's records and queued outcomes, read once its indexes
// have been checked against them (Invariants).
func (f *fixture) census() types.GenesisState {
	f.t.Helper()
	require.NoError(f.t, f.s.Invariants(f.ctx), "breaker indexes at height %d", f.height)
	var gs types.GenesisState
	require.NoError(f.t, f.s.ExportGenesis(f.ctx, &gs))
	return gs
}

// hasRecord reports whether the store holds a record of executor i.
func (f *fixture) hasRecord(i byte) bool {
	f.t.Helper()
	for _, h := range f.census().ExecutorHealth {
		if h.Address == bech(i) {
			return true
		}
	}
	return false
}

func requireBreakerEmpty(t *testing.T, f *fixture) {
	t.Helper()
	gs := f.census()
	require.Empty(t, gs.ExecutorHealth, "breaker records left at height %d", f.height)
	require.Empty(t, gs.PendingSamples, "breaker pending samples left at height %d", f.height)
}

func typedEvents[T proto.Message](t testing.TB, ctx sdk.Context) []T {
	return testkit.TypedEvents[T](t, ctx)
}
