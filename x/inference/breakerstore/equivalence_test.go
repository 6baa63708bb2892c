package breakerstore

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	abci "github.com/cometbft/cometbft/abci/types"
	"github.com/cosmos/gogoproto/proto"
	"github.com/stretchr/testify/require"

	sdk "github.com/cosmos/cosmos-sdk/types"

	"github.com/inferenced/inferenced/x/inference/breaker"
	"github.com/inferenced/inferenced/x/inference/service"
	"github.com/inferenced/inferenced/x/inference/testutil/testkit"
	"github.com/inferenced/inferenced/x/inference/types"
	"github.com/inferenced/inferenced/x/inference/verdict"
)

// TestStepMatchesLegacy runs random multi-block histories through today's
// step and through the code of before the write-back step (legacy,
// legacy_step_test.go), each on a store of its own, and requires after
// every block: the same result of Step (its error, the miss verdicts in
// order, the sample counts), the same events in the same order, the same
// results of the block's starts (ClaimProbe) and outcomes (QueueOutcome),
// the same breaker state as it reads (the records ExportGenesis
// materializes through the streaks item, the count, the queued mark, the
// cooldown entries, the gates: compareStores), today's invariants
// (Invariants, the held bits and the item included), and, in every block
// after which today's store carries no streak, every key and value of the
// module store the same but the held bits (today's only). Now and then,
// between two blocks, today's store goes through a genesis export and
// import or the v7 upgrade (restart), often mid-streak.
//
// A history: a group of 5 to 24 executors of random weights serving one
// or two models; each executor's condition changes now and then between
// healthy, dark (attested missed, or unknown), degraded (attested ok,
// failing canaries and clients) and flaky; three transfer agents start
// inferences on random executors (every start asks for the probe slot),
// which finish or expire by the executor's condition; each block
// carries attested verdicts and service rates from the conditions (some
// blocks none, some a packing that does not fit the group), under random
// params: a small exclusion cap (15-100%), one or two agents to
// corroborate, short cooldowns (promotions, re-exclusions), short trip
// rules, and epochs of 25 to 1000 blocks (the boundary clears the breaker
// and reshuffles the group).
//
// BREAKER_EQUIV_HISTORIES sets how many histories to run (default 40, 10
// with -short). The test also requires that the histories, together,
// reached every transition of the breaker, a cap refusal, a probe, a
// scoped trip, held and counted traffic misses, a record dropped by the
// step (and in the same block another created: the count written back to
// its old value), and an executor moved twice in one block (saved more
// than once by the step), streaks of misses and of service oks carried by
// the item (for 10 blocks in a row, too), ended by a sample that changes
// them, kept through a block without one, and a restart mid-streak:
// otherwise the comparison would prove little.
func TestStepMatchesLegacy(t *testing.T) {
	histories, blocks := 40, 120
	if testing.Short() {
		histories, blocks = 12, 100
	}
	if v := os.Getenv("BREAKER_EQUIV_HISTORIES"); v != "" {
		n, err := strconv.Atoi(v)
		require.NoError(t, err)
		histories = n
	}
	seen := map[string]int{}
	for seed := range uint64(histories) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) { runDifferential(t, seed, blocks, seen) })
	}
	for _, what := range []string{
		"HEALTHY->EXCLUDED", "EXCLUDED->PROBE", "PROBE->HEALTHY", "PROBE->EXCLUDED",
		proto.MessageName(&types.EventExclusionCapped{}), proto.MessageName(&types.EventProbeStarted{}),
		proto.MessageName(&types.EventTrafficMissHeld{}), proto.MessageName(&types.EventTrafficMissCounted{}),
		proto.MessageName(&types.EventExecutorScoped{}),
		"attested miss", "attested ok", "service miss", "service ok", "record dropped", "record dropped and another created", "moved twice in a block",
		"miss streak carried", "service ok streak carried", "no streak carried", "genesis import mid-streak", "upgrade mid-streak",
		"miss streak ended", "service ok streak ended", "miss streak kept through a block without one",
		"miss streak of 10 blocks", "service ok streak of 10 blocks",
	} {
		require.Positive(t, seen[what], "no history reached %q: %v", what, seen)
	}
	t.Logf("reached over %d histories of %d blocks: %v", histories, blocks, seen)
}

// world is a history's script source: the executors' conditions, the
// inferences in flight and the group, shared by both stores.
type world struct {
	r        *rand.Rand
	params   types.Params
	pool     []envMember // everyone who may join the group
	group    []envMember // the current group, by address
	cond     map[string]condition
	inFlight []*inflight
	seq      int
	epochEnd int64
	// calm histories keep every executor healthy, missing a few traffic
	// outcomes and no attested sample, with no failing agent and long
	// epochs: records come and age out, and are dropped.
	calm bool
}

type condition uint8

const (
	healthy condition = iota
	dark
	degraded
	flaky
	// cheat serves the validators' canaries and its health check but
	// drops clients' requests (a scoped traffic trip).
	cheat
)

type inflight struct {
	id, agent string
	executor  sdk.AccAddress
	start     int64
	expires   int64
}

var worldAgents = []string{"agent-a", "agent-b", "agent-c"}

func newWorld(t *testing.T, seed uint64) *world {
	r := rand.New(rand.NewPCG(seed, 0xb4ea4e4))
	p := testkit.BreakerParams()
	p.HealthCbMaxExcludedWeightPct = []uint64{15, 30, 50, 100}[r.IntN(4)]
	p.HealthCbTrafficMinAgents = uint64(1 + r.IntN(2))
	p.HealthCbInitialCooldownBlocks = uint64(1 + r.IntN(4))
	p.HealthCbMaxCooldownBlocks = p.HealthCbInitialCooldownBlocks << r.IntN(3)
	p.HealthCbWindowSamples, p.HealthCbMinSamples, p.HealthCbConsecutiveMisses = 8, 3, uint64(2+r.IntN(2))
	p.HealthCbTrafficWindowSamples, p.HealthCbTrafficMinSamples = 8, 3
	p.HealthCbTrafficConsecutiveMisses = uint64(2 + r.IntN(2))
	p.HealthCbServiceWindowSamples, p.HealthCbServiceMinSamples, p.HealthCbServiceConsecutiveMisses = 8, 3, 3
	p.EpochLength = []uint64{25, 40, 1000}[r.IntN(3)]
	p.ExpirationBlocks = uint64(1 + r.IntN(3))
	w := &world{r: r, params: p, cond: map[string]condition{}, calm: seed%3 == 0}
	if w.calm {
		p.EpochLength = 1000 // records outlive 64 samples, age out and are dropped
		p.ExpirationBlocks = 1
	}
	require.NoError(t, p.Validate())
	w.params = p
	for i := range 30 {
		models := [][]string{{"m"}, {"n"}, {"m", "n"}}[r.IntN(3)]
		w.pool = append(w.pool, envMember{addr: envAddr(i + 1), weight: uint64(1 + r.IntN(20)), models: models})
	}
	return w
}

// newGroup draws the next epoch's group from the pool.
func (w *world) newGroup() {
	n := 5 + w.r.IntN(pick(w.calm, 4, 20))
	perm := w.r.Perm(len(w.pool))[:n]
	slices.Sort(perm)
	w.group = w.group[:0]
	for _, i := range perm {
		m := w.pool[i]
		if w.r.IntN(4) == 0 {
			m.weight = uint64(1 + w.r.IntN(20))
		}
		w.group = append(w.group, m)
	}
}

// evolve changes some executors' conditions.
func (w *world) evolve() {
	for _, m := range w.pool {
		if !w.calm && w.r.IntN(12) == 0 {
			w.cond[string(m.addr)] = condition(w.r.IntN(5))
		}
	}
}

// attestation is the block's verdicts and service rates from the
// conditions; sometimes none, rarely one that does not fit the group.
func (w *world) attestation(t *testing.T) Attestation {
	n := len(w.group)
	switch w.r.IntN(20) {
	case 0:
		return Attestation{}
	case 1:
		n++ // names a member the group lacks
	}
	vs := make([]verdict.Verdict, n)
	rates := make([]service.Report, n)
	for i := range vs {
		c := healthy
		if i < len(w.group) {
			c = w.cond[string(w.group[i].addr)]
		}
		x := w.r.IntN(100)
		switch c {
		case healthy:
			vs[i] = pick(x < 90, verdict.OK, pick(x < pick(w.calm, 90, 93), verdict.Miss, verdict.Unknown))
			rates[i] = service.Report(w.r.IntN(8))
		case dark:
			vs[i] = pick(x < 85, verdict.Miss, verdict.Unknown)
			rates[i] = service.Unknown
		case degraded:
			vs[i] = pick(x < 95, verdict.OK, verdict.Unknown)
			rates[i] = service.Report(30 + w.r.IntN(60))
		case flaky:
			vs[i] = pick(x < 50, verdict.OK, pick(x < 80, verdict.Miss, verdict.Unknown))
			rates[i] = pick(x%3 == 0, service.Unknown, service.Report(w.r.IntN(40)))
		case cheat:
			vs[i] = verdict.OK
		}
	}
	packed, err := verdict.Pack(vs)
	require.NoError(t, err)
	att := Attestation{Members: n, Samples: packed}
	if w.r.IntN(6) != 0 {
		att.Service, err = service.Encode(service.Clamp(rates))
		require.NoError(t, err)
	}
	if w.r.IntN(15) == 0 {
		att.Samples = nil // service rates alone
	}
	return att
}

func pick[T any](cond bool, a, b T) T {
	if cond {
		return a
	}
	return b
}

// op is one thing a block does after its step, applied to both stores
// alike.
type op struct {
	claim   *inflight // a start: ClaimProbe
	outcome *inflight // an end: QueueOutcome
	miss    bool
}

// blockOps are the block's starts and ends: new inferences on random
// members, the finishes of those in flight (by their executor's
// condition), then the expiries due.
func (w *world) blockOps(h int64) []op {
	var ops []op
	for range w.r.IntN(pick(w.calm, 30, 8)) {
		if len(w.group) == 0 {
			break
		}
		w.seq++
		inf := &inflight{
			id: fmt.Sprintf("inf-%d", w.seq), agent: worldAgents[w.r.IntN(len(worldAgents))],
			executor: w.group[w.r.IntN(len(w.group))].addr, start: h, expires: h + int64(w.params.ExpirationBlocks),
		}
		w.inFlight = append(w.inFlight, inf)
		ops = append(ops, op{claim: inf})
	}
	var left []*inflight
	for _, inf := range w.inFlight {
		finishes := pick(w.calm, 99, 95)
		switch w.cond[string(inf.executor)] {
		case dark:
			finishes = 0
		case degraded:
			finishes = 40
		case flaky:
			finishes = 70
		case cheat:
			finishes = 10
		}
		// An agent that never forwards some requests: misses through it
		// alone.
		if inf.agent == "agent-c" && !w.calm {
			finishes -= 20
		}
		switch {
		case inf.start < h && w.r.IntN(100) < finishes:
			ops = append(ops, op{outcome: inf})
		default:
			left = append(left, inf)
		}
	}
	w.inFlight = w.inFlight[:0]
	for _, inf := range left {
		if inf.expires <= h {
			ops = append(ops, op{outcome: inf, miss: true})
			continue
		}
		w.inFlight = append(w.inFlight, inf)
	}
	return ops
}

// side is one store of the comparison.
type side struct {
	env  *stepEnv
	impl stepper
}

// blockResult is everything a block did that the two sides must agree on.
type blockResult struct {
	applied Applied
	stepErr string
	opErrs  []string
	events  []abci.Event
	hash    []byte
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// runBlock runs block h on one side: the step, the epoch boundary (clear,
// new group), then the block's starts and ends; then commits.
func (sd side) runBlock(t *testing.T, w *world, h int64, att Attestation, boundary bool, ops []op) blockResult {
	ctx, cache := sd.env.block(h)
	var res blockResult
	applied, err := sd.impl.step(sd.env.s, ctx, Block{Params: w.params, Attested: att})
	res.applied, res.stepErr = applied, errString(err)
	if boundary {
		require.NoError(t, sd.env.s.Clear(ctx))
		sd.env.setGroup(t, ctx, w.group)
	}
	for _, o := range ops {
		executor, err := ac.BytesToString(func() sdk.AccAddress {
			if o.claim != nil {
				return o.claim.executor
			}
			return o.outcome.executor
		}())
		require.NoError(t, err)
		switch {
		case o.claim != nil:
			err = sd.env.s.ClaimProbe(ctx, o.claim.executor, o.claim.agent, o.claim.id)
			if errors.Is(err, types.ErrProbeTaken) {
				err = nil // the keeper refuses the start; nothing was written
			}
		default:
			inf := o.outcome
			if !o.miss {
				sd.env.finished(t, ctx, inf.executor)
			}
			err = sd.env.s.QueueOutcome(ctx, types.Inference{
				InferenceId: inf.id, TransferAgent: inf.agent, Executor: executor,
				StartHeight: inf.start, EndHeight: h, ExpirationHeight: inf.expires,
			}, o.miss)
		}
		res.opErrs = append(res.opErrs, errString(err))
	}
	res.events = ctx.EventManager().ABCIEvents()
	res.hash = sd.env.commit(cache)
	return res
}

func runDifferential(t *testing.T, seed uint64, blocks int, seen map[string]int) {
	runDifferentialOf(t, seed, blocks, seen, stepLegacy, stepToday)
}

// runDifferentialOf runs one history through want and got.
func runDifferentialOf(t *testing.T, seed uint64, blocks int, seen map[string]int, want, got stepper) {
	w := newWorld(t, seed)
	sides := []side{{newStepEnv(t), want}, {newStepEnv(t), got}}
	w.newGroup()
	for _, sd := range sides {
		ctx, cache := sd.env.block(1)
		sd.env.setGroup(t, ctx, w.group)
		sd.env.commit(cache)
	}
	w.epochEnd = 2 + int64(w.params.EpochLength)
	var records [][]byte
	runs := map[uint32][2]int{} // by member: how many blocks in a row the item carried its miss, its ok
	for h := int64(2); h < int64(2+blocks); h++ {
		w.evolve()
		att := w.attestation(t)
		boundary := h >= w.epochEnd
		if boundary {
			w.newGroup()
			w.epochEnd = h + int64(w.params.EpochLength)
		}
		ops := w.blockOps(h)
		prev := sides[1].env.streaksNow(t)
		want := sides[0].runBlock(t, w, h, att, boundary, ops)
		got := sides[1].runBlock(t, w, h, att, boundary, ops)
		if !boundary {
			tallyStreaks(seen, h, prev, sides[1].env.streaksNow(t), runs)
		}
		require.Equal(t, want.stepErr, got.stepErr, "block %d: step error", h)
		require.Equal(t, want.applied, got.applied, "block %d: step result", h)
		require.Equal(t, want.events, got.events, "block %d: events", h)
		require.Equal(t, want.opErrs, got.opErrs, "block %d: starts and ends", h)
		dump := compareStores(t, sides[0].env, sides[1].env, h, seen)
		if !strings.HasPrefix(sides[1].impl.name, "legacy") { // the legacy step keeps no held bits
			require.NoError(t, sides[1].env.s.Invariants(sides[1].env.base), "block %d", h)
		}
		if w.r.IntN(25) == 0 {
			restart(t, w, sides[1].env, h, seen)
		}
		tally(t, seen, got)
		now := recordKeys(dump)
		if !boundary {
			dropped, created := 0, 0
			for _, k := range records {
				if !slices.ContainsFunc(now, func(n []byte) bool { return bytes.Equal(n, k) }) {
					dropped++
				}
			}
			for _, k := range now {
				if !slices.ContainsFunc(records, func(n []byte) bool { return bytes.Equal(n, k) }) {
					created++
				}
			}
			if dropped > 0 {
				seen["record dropped"]++
				if created > 0 {
					seen["record dropped and another created"]++
				}
			}
		}
		records = now
	}
}

// compareStores requires the two stores to hold the same breaker state as
// the breaker reads it: the records as ExportGenesis materializes them,
// the count, the queued mark, the cooldown entries and the gates (census).
// Where got's streaks item carries nothing, every key and value but the
// held bits and the sample sequence (set, to its value, by a genesis
// import: restart) must be the same too. It returns want's dump.
func compareStores(t *testing.T, want, got *stepEnv, h int64, seen map[string]int) [][2][]byte {
	wc, err := want.s.read(want.base)
	require.NoError(t, err)
	gc, err := got.s.read(got.base)
	require.NoError(t, err)
	require.Equal(t, wc, gc, "block %d: the breaker state as read (materialized records, indexes)", h)
	k, found, err := got.s.loadStreaks(got.base)
	require.NoError(t, err)
	dump := withoutPrefix(withoutPrefix(want.dump(t), types.HeldBitsKey), types.SampleSequenceKey)
	if !found {
		seen["no streak carried"]++
		require.Equal(t, dump, withoutPrefix(withoutPrefix(got.dump(t), types.HeldBitsKey), types.SampleSequenceKey), "block %d: store contents", h)
		return dump
	}
	if k.miss != nil {
		seen["miss streak carried"]++
	}
	if k.ok != nil {
		seen["service ok streak carried"]++
	}
	return dump
}

// streaksNow is the committed streaks item (zero when absent).
func (e *stepEnv) streaksNow(t *testing.T) streaks {
	k, _, err := e.s.loadStreaks(e.base)
	require.NoError(t, err)
	return k
}

// tallyStreaks counts how a block ended or kept the streaks it started
// with, and the streaks the item carried for 10 blocks in a row (runs).
func tallyStreaks(seen map[string]int, h int64, prev, next streaks, runs map[uint32][2]int) {
	for i := range uint32(8 * max(len(prev.miss), len(prev.ok), len(next.miss), len(next.ok))) {
		r := runs[i]
		for kind, carried := range [2]bool{next.miss.has(i) && next.missAt == h, next.ok.has(i) && next.okAt == h} {
			if !carried {
				r[kind] = 0
				continue
			}
			if r[kind]++; r[kind] == 10 {
				seen[[2]string{"miss streak of 10 blocks", "service ok streak of 10 blocks"}[kind]]++
			}
		}
		runs[i] = r
	}
	if prev.miss != nil && next.missAt != prev.missAt && prev.miss.minus(next.miss) != nil {
		seen["miss streak ended"]++
	}
	if prev.ok != nil && next.okAt != prev.okAt && prev.ok.minus(next.ok) != nil {
		seen["service ok streak ended"]++
	}
	if prev.miss != nil && next.missAt == prev.missAt && next.miss != nil && h > prev.missAt {
		seen["miss streak kept through a block without one"]++
	}
}

// withoutPrefix is dump without the keys under prefix.
func withoutPrefix(dump [][2][]byte, prefix []byte) [][2][]byte {
	var out [][2][]byte
	for _, kv := range dump {
		if !bytes.HasPrefix(kv[0], prefix) {
			out = append(out, kv)
		}
	}
	return out
}

// restart gives got's store, between blocks, what a node finds after a
// genesis export and import (the records as exported, no streaks item),
// or after the v7 upgrade (the records as the step of before stored
// them: materialized; no streaks item; the held bits built by the
// migration).
func restart(t *testing.T, w *world, env *stepEnv, h int64, seen map[string]int) {
	ctx, cache := env.block(h)
	_, carried, err := env.s.loadStreaks(ctx)
	require.NoError(t, err)
	var gs types.GenesisState
	require.NoError(t, env.s.ExportGenesis(ctx, &gs))
	if w.r.IntN(2) == 0 {
		require.NoError(t, env.s.Clear(ctx))
		require.NoError(t, env.s.InitGenesis(ctx, gs))
		seen[pick(carried, "genesis import mid-streak", "genesis import")]++
	} else {
		for _, rec := range gs.ExecutorHealth {
			addr, err := ac.StringToBytes(rec.Address)
			require.NoError(t, err)
			require.NoError(t, env.s.records.Set(ctx, addr, rec))
		}
		require.NoError(t, env.s.streaks.Remove(ctx))
		require.NoError(t, env.s.bits.Remove(ctx))
		require.NoError(t, env.s.BuildHeldBits(ctx))
		seen[pick(carried, "upgrade mid-streak", "upgrade")]++
	}
	env.commit(cache)
}

// recordKeys are the keys of the breaker records in a store dump.
func recordKeys(dump [][2][]byte) [][]byte {
	var out [][]byte
	for _, kv := range dump {
		if bytes.HasPrefix(kv[0], types.ExecutorHealthPrefix) {
			out = append(out, kv[0])
		}
	}
	return out
}

// tally counts what a block reached: its events by type (transitions by
// from and to) and its samples by kind.
func tally(t *testing.T, seen map[string]int, res blockResult) {
	for _, ev := range res.events {
		seen[ev.Type]++
	}
	moved := map[string]int{}
	for _, ev := range testkit.ParseEvents[*types.EventExecutorHealthChanged](t, res.events) {
		seen[fmt.Sprintf("%s->%s", breakerState(ev.From), breakerState(ev.To))]++
		if moved[ev.Executor]++; moved[ev.Executor] == 2 {
			seen["moved twice in a block"]++
		}
	}
	seen["attested miss"] += res.applied.AttestedMisses
	seen["attested ok"] += res.applied.AttestedOKs
	seen["service miss"] += res.applied.ServiceMisses
	seen["service ok"] += res.applied.ServiceOKs
}

func breakerState(s types.HealthState) string { return breaker.State(s).String() }

// TestStepPartsMatchStep holds the step benchmark's drivers
// (step_parts_test.go) to the steps they take apart.
func TestStepPartsMatchStep(t *testing.T) {
	var pt stepParts
	for seed := range uint64(6) {
		t.Run(fmt.Sprintf("today/%d", seed), func(t *testing.T) {
			runDifferentialOf(t, seed, 80, map[string]int{}, stepToday, partsStepper("today-parts", todayParts, &pt))
		})
		t.Run(fmt.Sprintf("legacy/%d", seed), func(t *testing.T) {
			runDifferentialOf(t, seed, 80, map[string]int{}, stepLegacy, partsStepper("legacy-parts", legacyParts, &pt))
		})
	}
}
