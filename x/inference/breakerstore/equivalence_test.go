package breakerstore

import (
	"bytes"
	"errors"
	"fmt"
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
	"github.com/inferenced/inferenced/x/inference/testutil/testkit"
	"github.com/inferenced/inferenced/x/inference/types"
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
