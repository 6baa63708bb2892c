package keeper_test

import (
	"fmt"
	"testing"

	"github.com/inferenced/inferenced/x/inference/testutil/testkit"

	"github.com/stretchr/testify/require"

	"github.com/inferenced/inferenced/x/inference/types"
)

// The breaker tests' params and trip rule (testkit.BreakerParams): no PoC
// phase, inferences expire after one block so a miss lands two blocks after
// its start, cooldowns 5 doubling up to 20, an SPRT threshold so high that
// only the breaker acts, one agent's word trusted and never stopped.
// Corroboration and standing have their own tests (evidence_*_test.go) at
// the defaults.
const (
	bInitial      = testkit.BreakerInitialCooldown
	bMax          = testkit.BreakerMaxCooldown
	bWindow       = testkit.BreakerWindow
	bMinSamples   = testkit.BreakerMinSamples
	bThresholdPct = testkit.BreakerThresholdPct
	bConsecutive  = testkit.BreakerConsecutive
)

func breakerParams() types.Params { return testkit.BreakerParams() }

// newBreakerFixture: executors 1-4 of weight 10 serve "m"; block 1 has begun.
func newBreakerFixture(t *testing.T, opts ...option) *fixture {
	t.Helper()
	base := []option{withParams(breakerParams()), withParticipants(
		gp(1, 10, true, "m"), gp(2, 10, true, "m"), gp(3, 10, true, "m"), gp(4, 10, true, "m"))}
	f := newFixture(t, append(base, opts...)...)
	f.begin(1)
	return f
}

// next ends the current block and begins the following one, where the
// breaker applies what the ended block observed.
func (f *fixture) next() {
	f.t.Helper()
	f.end()
	f.begin(f.height + 1)
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

func (f *fixture) newID() string {
	f.seq++
	return fmt.Sprintf("inf-%d", f.seq)
}

// health is the ExecutorHealth query answer for executor i.
func (f *fixture) health(i byte) types.HealthStatus {
	f.t.Helper()
	resp, err := f.query.ExecutorHealth(f.ctx, &types.QueryExecutorHealthRequest{Address: bech(i)})
	require.NoError(f.t, err)
	return resp.Health
}

// attest queues an attested sample for the next block's breaker step.
func (f *fixture) attest(i byte, miss bool) {
	f.attested = append(f.attested, testkit.Attested{Executor: addr(i), Miss: miss})
}

// offered counts, over many seeds, how often each executor is drawn.
func (f *fixture) offered(seeds uint64) map[string]int {
	f.t.Helper()
	return counts(f.t, f, "m", seeds)
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

// census is the breaker's state as the tests read it back: its records and
// queued outcomes, read once every index save derives from them has been
// checked to be in step with them (breakerstore.Store.Invariants: the record
// count, the queued mark, the cooldown index and the gates).
type census struct {
	Records  []types.ExecutorHealth
	Pending  []types.PendingSampleEntry
	Sequence uint64
}

func (f *fixture) census() census {
	f.t.Helper()
	require.NoError(f.t, f.k.Breaker().Invariants(f.ctx), "breaker indexes at height %d", f.height)
	var gs types.GenesisState
	require.NoError(f.t, f.k.Breaker().ExportGenesis(f.ctx, &gs))
	return census{Records: gs.ExecutorHealth, Pending: gs.PendingSamples, Sequence: gs.SampleSequence}
}

// Record returns the stored record of address, if any.
func (c census) Record(address string) (types.ExecutorHealth, bool) {
	for _, h := range c.Records {
		if h.Address == address {
			return h, true
		}
	}
	return types.ExecutorHealth{}, false
}

// requireBreakerEmpty checks that no breaker state is stored: no record and
// no queued outcome, hence (Invariants) no cooldown entry and no gate.
func requireBreakerEmpty(t *testing.T, f *fixture) {
	t.Helper()
	c := f.census()
	require.Empty(t, c.Records, "breaker records left at height %d", f.height)
	require.Empty(t, c.Pending, "breaker pending samples left at height %d", f.height)
}
