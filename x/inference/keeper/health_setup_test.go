package keeper_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/inferenced/inferenced/x/inference/types"
)

// Breaker test params: no PoC phase, inferences expire after one block so a
// miss lands two blocks after its start, cooldowns 5 doubling up to 20, and
// an SPRT threshold so high that only the breaker acts. One agent's word is
// trusted (health_cb_traffic_min_agents 1): these tests drive the breaker's
// state machine through the keeper, and the evidence ledger then passes
// every miss through in its block; the agent's allowance is set out of the
// way so the one agent is never stopped. Corroboration and standing have
// their own tests (evidence_*_test.go) at the defaults.
const (
	bInitial = 5
	bMax     = 20
)

// The breaker tests' trip rule, the same for both sample kinds: at least 4
// samples and over 25% missed in the last 16, or 3 misses in a row (the
// seed's rule). The tests count misses against it, so they set it
// themselves rather than follow the chain's calibrated defaults.
const (
	bWindow       = 16
	bMinSamples   = 4
	bThresholdPct = 25
	bConsecutive  = 3
)

func breakerParams() types.Params {
	p := testParams()
	p.EpochLength = 200
	p.PocPhaseBlocks = 0
	p.ExpirationBlocks = 1
	p.HealthCbInitialCooldownBlocks = bInitial
	p.HealthCbMaxCooldownBlocks = bMax
	p.DowntimeHThreshold = dec("1000")
	p.HealthCbTrafficMinAgents = 1
	p.TransferAgentMissAllowance = types.MaxTransferAgentMissAllowance
	setTripRules(&p)
	return p
}

// setTripRules gives both sample kinds the breaker tests' trip rule.
func setTripRules(p *types.Params) {
	p.HealthCbWindowSamples, p.HealthCbMinSamples = bWindow, bMinSamples
	p.HealthCbMissThresholdPct, p.HealthCbConsecutiveMisses = bThresholdPct, bConsecutive
	p.HealthCbTrafficWindowSamples, p.HealthCbTrafficMinSamples = bWindow, bMinSamples
	p.HealthCbTrafficMissThresholdPct, p.HealthCbTrafficConsecutiveMisses = bThresholdPct, bConsecutive
}

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
	for _, c := range pattern {
		id := f.newID()
		f.mustStart(id, executor, "m")
		if c == 'o' {
			require.NoError(f.t, f.finish(executor, id))
		}
		f.next()
		if c == 'm' {
			f.next()
		}
	}
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
	f.attested = append(f.attested, attestation{executor: addr(i), miss: miss})
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
