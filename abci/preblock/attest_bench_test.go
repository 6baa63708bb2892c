package preblock_test

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"
	"time"

	abci "github.com/cometbft/cometbft/abci/types"
	cmtcrypto "github.com/cometbft/cometbft/crypto"
	"github.com/cometbft/cometbft/crypto/ed25519"
	sdk "github.com/cosmos/cosmos-sdk/types"
	"github.com/stretchr/testify/require"

	"github.com/inferenced/inferenced/abci/internal/testcommit"
	"github.com/inferenced/inferenced/abci/proposals"
	"github.com/inferenced/inferenced/abci/ve"
	"github.com/inferenced/inferenced/monitor"
	"github.com/inferenced/inferenced/monitor/cusum"
	"github.com/inferenced/inferenced/x/inference/aggregate"
	"github.com/inferenced/inferenced/x/inference/keeper"
	"github.com/inferenced/inferenced/x/inference/service"
	"github.com/inferenced/inferenced/x/inference/testutil"
	"github.com/inferenced/inferenced/x/inference/types"
	"github.com/inferenced/inferenced/x/inference/verdict"
)

// BenchmarkAttestationBlock is one block's attestation work at 150
// validators x {1,000; 10,000} executors against the signature checks that
// baseapp.ValidateVoteExtensions already does on the same commit, measured
// side by side in the same loop (scripts/bench-attestation.sh runs it
// against an earlier commit too, in one run).
//
// Ours is what ProcessProposal and the pre-blocker add, through the same
// functions they call: decode the bundle, inflate its extensions and
// rebuild the commit from the last commit, check it (proposals.Check with
// keys that accept every signature, so the signatures are not counted
// twice: the sign bytes are still built, the extensions still checked by
// ve.Checker), aggregate the liveness verdicts and take the service
// medians, compare both with the bundle's. Then the keeper maps the
// samples to executors and runs the breaker's step (ApplyHealth), in the
// steady state of the scenario: the same attestations were applied for
// the blocks before, so the records it holds exist, as they do on a chain
// where the fault has lasted a while. The first block of the fault, where
// every record is new, is reported apart (µs-keeper-first).
//
// Every validator carries liveness verdicts and service reports (honest
// ones: ExtendVote's relative, clamped lists of what the monitor reports
// for executors failing 3.25% of their canaries, the simulator's honest
// baseline), with distinct powers. Scenarios:
//   - identical: every validator reports the same 1% of executors missed;
//   - all-distinct: the same, and each validator one more executor unknown
//     than the next, so no two extensions are equal (the tally's worst
//     case among agreeing validators);
//   - random-30pct: each validator sees its own random 30% missed (nothing
//     is shared; the codec's and the tally's worst case);
//   - correlated-30pct: the same 30% missed for everyone (a third of the
//     network dark), each validator flipping its own random 1% of verdicts
//     (so no two extensions are equal).
//
// Metrics: ratio = verify + aggregate / signatures; ratio-with-keeper adds
// the keeper's steady-state step; bundle-bytes; allocs of each part.
func BenchmarkAttestationBlock(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		for _, sc := range []string{"identical", "all-distinct", "random-30pct", "correlated-30pct"} {
			b.Run(fmt.Sprintf("executors=%d/%s", n, sc), func(b *testing.B) { benchAttestation(b, n, sc) })
		}
	}
}

// scenarioVerdicts is validator i's verdicts on n executors in a scenario.
func scenarioVerdicts(scenario string, n, i int) []verdict.Verdict {
	vs := make([]verdict.Verdict, n)
	own := rand.New(rand.NewPCG(uint64(i), 30))
	common := rand.New(rand.NewPCG(1<<20, 30))
	for e := range vs {
		vs[e] = verdict.OK
		switch scenario {
		case "random-30pct":
			if own.IntN(10) < 3 {
				vs[e] = verdict.Miss
			}
		case "correlated-30pct":
			if common.IntN(10) < 3 {
				vs[e] = verdict.Miss
			}
			if own.IntN(100) == 0 {
				vs[e] ^= verdict.OK ^ verdict.Miss
			}
		default:
			if e%100 == 0 {
				vs[e] = verdict.Miss
			}
		}
	}
	if scenario == "all-distinct" {
		vs[n/2+i] = verdict.Unknown
	}
	return vs
}

// honestService is validator i's service reports, as ExtendVote attests
// them (relative to its own median, under ve.ServiceFloor, clamped): for
// each executor its monitor's report at a moment of its own, drawn from
// what the monitor reports over time for an executor failing canaries at
// the honest 3.25% baseline (dist, monitorReports); Unknown for the
// executors it sees missed, since a monitor sends no canary to an
// executor whose health probe fails.
func honestService(tb testing.TB, dist reportDist, vs []verdict.Verdict, i int) []byte {
	tb.Helper()
	r := rand.New(rand.NewPCG(uint64(i), 13))
	rates := make([]service.Report, len(vs))
	for e := range rates {
		rates[e] = dist.draw(r)
		if vs[e] != verdict.OK {
			rates[e] = service.Unknown
		}
	}
	bz, err := service.Attest(rates, ve.ServiceFloor)
	require.NoError(tb, err)
	return bz
}

// reportDist is how long a monitor reports each rate: at[k] seconds of a
// long run reported rate[k] (cumulative, so a uniform draw below the last
// is a moment of that run).
type reportDist struct {
	rate []service.Report
	at   []uint64
}

func (d reportDist) draw(r *rand.Rand) service.Report {
	t := r.Uint64N(d.at[len(d.at)-1])
	k, _ := slices.BinarySearch(d.at, t+1)
	return d.rate[k]
}

// monitorReports runs one executor's canaries through the monitor's rule
// with its defaults (monitor.DefaultConfig: a CUSUM between the baseline
// and degraded rates alarming at canary-alarm, a window of the last
// canary-window outcomes, one canary every canary-interval, every
// canary-suspect-interval while the sum is above 0) for an executor
// failing a canary with probability missBP/10,000, and returns for how
// long it reports each rate. As canaryState.report does, the monitor
// reports 0% until its CUSUM alarms and the window's failed share while
// it is alarmed; at the defaults every window is fresh (16 canaries take
// at most 16 minutes, canary-ttl is 40), so no report is Unknown. The
// jitter of the gaps (within 25%) averages out over the run.
func monitorReports(tb testing.TB, missBP int) reportDist {
	tb.Helper()
	cfg := monitor.DefaultConfig()
	rule, err := cusum.New(cfg.CanaryBaselinePct*100, cfg.CanaryDegradedPct*100, cfg.CanaryAlarm)
	require.NoError(tb, err)
	require.Less(tb, time.Duration(cfg.CanaryWindow)*cfg.CanaryInterval, cfg.CanaryTTL, "a window would go stale")
	r := rand.New(rand.NewPCG(325, 16))
	window := make([]bool, cfg.CanaryWindow)
	var state cusum.State
	var seconds [service.MaxRate + 1]uint64
	for k := range 2_000_000 {
		miss := r.IntN(10_000) < missBP
		state, window[k%len(window)] = rule.Step(state, miss), miss
		gap := cfg.CanaryInterval
		if state.Sum > 0 {
			gap = cfg.CanarySuspectInterval
		}
		rate := service.Report(0)
		if state.Alarmed && k+1 >= cfg.CanaryMinSamples {
			rate = service.Rate(count(window), min(k+1, len(window)))
		}
		seconds[rate] += uint64(gap / time.Second)
	}
	var d reportDist
	var at uint64
	for rate, s := range seconds {
		if s > 0 {
			at += s
			d.rate, d.at = append(d.rate, service.Report(rate)), append(d.at, at)
		}
	}
	return d
}

// count is how many of bs are true.
func count(bs []bool) int {
	n := 0
	for _, b := range bs {
		if b {
			n++
		}
	}
	return n
}

// attestationFixture is one scenario's block: the commit the validators
// signed, what ProcessProposal receives, and what the keeper applies.
type attestationFixture struct {
	commit      abci.ExtendedCommitInfo
	last        abci.CommitInfo
	keys        []ed25519.PubKey
	trusting    proposals.KeyLookup
	tx          []byte
	epoch       uint64
	n           int
	samples     []byte
	serviceRate []byte
	// rated is how many executors an extension rates above 0%, on
	// average (its service exceptions less its unknowns).
	rated float64
}

const (
	benchValidators = 150
	benchChainID    = "bench"
	// benchWarmup blocks of the scenario are applied before the measured
	// one (the vote height benchVoteHeight), so records are in their
	// steady state.
	benchWarmup     = 24
	benchVoteHeight = int64(2 + benchWarmup)
	// honestMissBP is the share of canaries an honest executor fails, in
	// basis points: the simulator's honest baseline (docs/simulation.md).
	honestMissBP = 325
)

func newAttestationFixture(b *testing.B, k keeper.Keeper, ctx sdk.Context, scenario string) attestationFixture {
	epoch, n, err := k.VoteGroup(ctx, benchVoteHeight)
	require.NoError(b, err)
	dist := monitorReports(b, honestMissBP)
	rated := 0
	vals := make([]testcommit.Validator, benchValidators)
	for i := range vals {
		vals[i] = testcommit.New([]byte{byte(i), byte(i >> 8)}, 1000+int64(i)*7)
	}
	// The steady state: the chain attested these verdicts in the blocks
	// before, so they are what the extensions are relative to.
	absolute := make([][]byte, len(vals))
	votes := make([]aggregate.Vote, len(vals))
	for i := range vals {
		absolute[i], err = verdict.Pack(scenarioVerdicts(scenario, n, i))
		require.NoError(b, err)
		votes[i] = aggregate.Vote{Power: vals[i].Power, Verdicts: absolute[i]}
	}
	steady, err := aggregate.Packed(votes, n)
	require.NoError(b, err)
	commit := testcommit.Commit(b, benchChainID, benchVoteHeight, 0, vals, func(i int) []byte {
		vs := scenarioVerdicts(scenario, n, i)
		packed, err := benchVerdicts(absolute[i], steady, n)
		require.NoError(b, err)
		svc := honestService(b, dist, vs, i)
		require.NoError(b, service.Each(svc, n, func(_ int, r service.Report) {
			if r.Known() {
				rated++
			}
		}))
		ext, err := ve.Encode(types.HealthVoteExtension{EpochIndex: epoch, Verdicts: packed, Service: svc}, n)
		require.NoError(b, err)
		return ext
	})
	fx := attestationFixture{commit: commit, last: proposals.CommitInfoOf(commit), epoch: epoch, n: n, rated: float64(rated) / benchValidators}
	lookup := testcommit.Keys(vals)
	known := make(map[string]bool, len(vals))
	for _, v := range commit.Votes {
		pk, err := lookup(v.Validator.Address)
		require.NoError(b, err)
		fx.keys = append(fx.keys, pk.(ed25519.PubKey))
		known[string(v.Validator.Address)] = true
	}
	// A state read per validator in a node, a map lookup here: neither is
	// the attestation's own work.
	fx.trusting = func(addr []byte) (cmtcrypto.PubKey, error) {
		if !known[string(addr)] {
			return nil, fmt.Errorf("validator %X unknown", addr)
		}
		return trustingKey{}, nil
	}
	// The proposer's side, once: what ProcessProposal receives.
	signed, err := proposals.Check(commit, fx.last, benchChainID, benchVoteHeight, lookup, ve.NewChecker(ctx, k, benchVoteHeight).Check)
	require.NoError(b, err)
	fx.samples, fx.serviceRate = benchSamples(b, signed, n, steady)
	require.Equal(b, steady, fx.samples, "the steady state's samples")
	bundle, err := newBenchBundle(commit, epoch, n, fx.samples, fx.serviceRate)
	require.NoError(b, err)
	fx.tx, err = proposals.Encode(bundle)
	require.NoError(b, err)
	return fx
}

// benchSamples is the samples and service rates of a checked commit whose
// verdicts are relative to ref.
func benchSamples(tb testing.TB, signed proposals.Signed, n int, ref []byte) (packed, rates []byte) {
	packed, err := benchTally(signed.Votes, n, ref)
	require.NoError(tb, err)
	rates, err = service.Encoded(signed.Service, uint64(signed.TotalPower), n)
	require.NoError(tb, err)
	return packed, rates
}

// verifyBundle is ProcessProposal's work on the bundle without the
// signatures: decode, inflate, check, aggregate, compare. It adds the
// time of each part to parts, when not nil (attestParts).
func (fx attestationFixture) verifyBundle(b *testing.B, k keeper.Keeper, ctx sdk.Context, parts *[len(attestParts)]time.Duration) {
	start := time.Now()
	lap := func(part int) {
		if now := time.Now(); parts != nil {
			parts[part] += now.Sub(start)
			start = now
		}
	}
	bundle, err := proposals.Decode(fx.tx)
	require.NoError(b, err)
	lap(0)
	ec, err := bundle.Commit(fx.last)
	require.NoError(b, err)
	lap(1)
	checker := ve.NewChecker(ctx, k, benchVoteHeight)
	if e, size, err := checker.Group(); err != nil || e != bundle.Epoch || size != bundle.Members {
		b.Fatal("group")
	}
	signed, err := proposals.Check(ec, fx.last, benchChainID, benchVoteHeight, fx.trusting, checker.Check)
	require.NoError(b, err)
	lap(2)
	ref, err := benchReference(k, ctx, bundle.Epoch, bundle.Members)
	require.NoError(b, err)
	packed, err := benchTally(signed.Votes, bundle.Members, ref)
	require.NoError(b, err)
	lap(3)
	rates, err := service.Encoded(signed.Service, uint64(signed.TotalPower), bundle.Members)
	require.NoError(b, err)
	lap(4)
	if !bytes.Equal(packed, bundle.Samples) || !bytes.Equal(rates, bundle.Service) {
		b.Fatal("samples")
	}
}

// attestParts name the parts of verifyBundle, each reported in µs per
// block: proposals.Decode of the bundle; Bundle.Commit (the extensions
// inflated, the commit rebuilt); proposals.Check with ve's check of every
// extension (the group read, the sign bytes built); aggregate.Packed;
// service.Encoded.
var attestParts = [...]string{"decode", "inflate", "check", "aggregate", "median"}

func (fx attestationFixture) apply(b *testing.B, k keeper.Keeper, ctx sdk.Context) {
	_, _, err := k.ApplyHealth(ctx, fx.epoch, fx.n, fx.samples, fx.serviceRate)
	require.NoError(b, err)
}

func benchAttestation(b *testing.B, executors int, scenario string) {
	// The first block of the fault, every record new, on a network of its
	// own: a few runs on throw-away caches, the best kept.
	var first time.Duration
	k, ctx, _ := testutil.Network(b, executors, breakerParams(), nil)
	fx := newAttestationFixture(b, k, ctx, scenario)
	for range 3 {
		block, _ := ctx.WithBlockHeight(benchVoteHeight + 1).CacheContext()
		start := time.Now()
		fx.apply(b, k, block)
		if d := time.Since(start); first == 0 || d < first {
			first = d
		}
	}
	// The measured network: the scenario's attestations applied in every
	// block before, then committed.
	k, ctx, _ = testutil.Network(b, executors, breakerParams(), func(k keeper.Keeper, ctx sdk.Context, _ []sdk.AccAddress) {
		fx = newAttestationFixture(b, k, ctx, scenario)
		for h := int64(2); h <= benchVoteHeight; h++ {
			fx.apply(b, k, ctx.WithBlockHeight(h))
		}
	})
	blockCtx := func() sdk.Context {
		block, _ := ctx.WithBlockHeight(benchVoteHeight + 1).CacheContext()
		return block
	}

	var sigs, ours, keeperTime time.Duration
	var parts [len(attestParts)]time.Duration
	// The set-up's garbage (two networks, the warm-up blocks) is not a
	// block's: collected here, it is not collected in the measured loop.
	runtime.GC()
	for b.Loop() {
		start := time.Now()
		for i, v := range fx.commit.Votes {
			if !fx.keys[i].VerifySignature(testcommit.SignBytes(benchChainID, benchVoteHeight, fx.commit.Round, v.VoteExtension), v.ExtensionSignature) {
				b.Fatal("signature")
			}
		}
		sigs += time.Since(start)

		block := blockCtx()
		start = time.Now()
		fx.verifyBundle(b, k, block, &parts)
		ours += time.Since(start)
		start = time.Now()
		fx.apply(b, k, block)
		keeperTime += time.Since(start)
	}
	verifyAllocs := mallocs(func() { fx.verifyBundle(b, k, blockCtx(), nil) })
	keeperAllocs := mallocs(func() { fx.apply(b, k, blockCtx()) })
	b.ReportMetric(float64(sigs.Microseconds())/float64(b.N), "µs-signatures/op")
	b.ReportMetric(float64(ours.Microseconds())/float64(b.N), "µs-verify+aggregate/op")
	b.ReportMetric(float64(keeperTime.Microseconds())/float64(b.N), "µs-keeper/op")
	b.ReportMetric(float64(first.Microseconds()), "µs-keeper-first")
	for i, name := range attestParts {
		b.ReportMetric(float64(parts[i].Microseconds())/float64(b.N), "µs-"+name)
	}
	b.ReportMetric(float64(ours)/float64(sigs), "ratio")
	b.ReportMetric(float64(ours+keeperTime)/float64(sigs), "ratio-with-keeper")
	b.ReportMetric(float64(len(fx.tx)), "bundle-bytes")
	b.ReportMetric(fx.rated, "rated/extension")
	b.ReportMetric(float64(verifyAllocs), "allocs-verify")
	b.ReportMetric(float64(keeperAllocs), "allocs-preblock")
}

// mallocs is how many heap allocations one run of f makes.
func mallocs(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.Mallocs - before.Mallocs
}

// trustingKey accepts every signature: the benchmark counts the real
// signature checks once, apart.
type trustingKey struct{ ed25519.PubKey }

func (trustingKey) VerifySignature([]byte, []byte) bool { return true }
