package preblock_test

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	abci "github.com/cometbft/cometbft/abci/types"
	"github.com/cometbft/cometbft/crypto/ed25519"
	"github.com/stretchr/testify/require"

	"github.com/inferenced/inferenced/abci/internal/testcommit"
	"github.com/inferenced/inferenced/abci/proposals"
	"github.com/inferenced/inferenced/abci/ve"
	"github.com/inferenced/inferenced/x/inference/aggregate"
	"github.com/inferenced/inferenced/x/inference/testutil"
	"github.com/inferenced/inferenced/x/inference/types"
	"github.com/inferenced/inferenced/x/inference/verdict"
)

// BenchmarkAttestationBlock is one block's attestation work at 150
// validators x {1,000; 10,000} executors, against the signature checks that
// baseapp.ValidateVoteExtensions already does on the same commit, measured
// side by side in the same loop. Ours is what ProcessProposal and this
// package's pre-blocker add: decode the bundle, inflate its extensions and
// rebuild the commit from the last commit, verify each extension
// (ve.Checker: decode, canonical, epoch, length), aggregate, compare the
// samples, then map them to executors and apply them to the breaker. The
// ratio metric is verify + aggregate (everything up to the compared
// samples) / signatures, the goal <= 0.10; ratio-with-keeper adds the
// keeper's mapping and breaker step, whose cost grows with the misses
// applied, not with the codec. Scenarios:
//   - identical: every validator reports the same 1% of executors missed;
//   - all-distinct: the same, and each validator one more executor unknown
//     than the next, so no two extensions are equal (the tally's worst
//     case among agreeing validators);
//   - random-30pct: each validator sees its own random 30% missed (nothing
//     is shared; the codec's and the tally's worst case).
//
// Each in both bundle layouts: HEALTH3 (zstd, what blocks carry from the v3
// switch) and HEALTH2 (DEFLATE, before it), so that the codec's share shows.
func BenchmarkAttestationBlock(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		for _, sc := range []string{"identical", "all-distinct", "random-30pct"} {
			for _, layout := range []proposals.Layout{proposals.LayoutV3, proposals.LayoutV2} {
				b.Run(fmt.Sprintf("executors=%d/%s/%s", n, sc, layout), func(b *testing.B) { benchAttestation(b, n, sc, layout) })
			}
		}
	}
}

// scenarioVerdicts is validator i's verdicts on n executors in a scenario.
func scenarioVerdicts(scenario string, n, i int) []verdict.Verdict {
	vs := make([]verdict.Verdict, n)
	r := rand.New(rand.NewPCG(uint64(i), 30))
	for e := range vs {
		vs[e] = verdict.OK
		switch scenario {
		case "random-30pct":
			if r.IntN(10) < 3 {
				vs[e] = verdict.Miss
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

func benchAttestation(b *testing.B, executors int, scenario string, layout proposals.Layout) {
	const validators, height, chainID = 150, int64(2), "bench"
	k, ctx, _ := testutil.Network(b, executors, breakerParams(), nil)
	epoch, n, err := k.VoteGroup(ctx, height)
	require.NoError(b, err)
	vals := make([]testcommit.Validator, validators)
	for i := range vals {
		vals[i] = testcommit.New([]byte{byte(i), byte(i >> 8)}, 100)
	}
	// Equal powers: CometBFT orders the votes by address.
	commit := testcommit.Commit(b, chainID, height, 0, vals, func(i int) []byte {
		packed, err := verdict.Pack(scenarioVerdicts(scenario, n, i))
		require.NoError(b, err)
		ext, err := ve.Encode(types.HealthVoteExtension{EpochIndex: epoch, Verdicts: packed}, n)
		require.NoError(b, err)
		return ext
	})
	last := proposals.CommitInfoOf(commit)
	keys := make([]ed25519.PubKey, len(commit.Votes))
	lookup := testcommit.Keys(vals)
	for i, v := range commit.Votes {
		pk, err := lookup(v.Validator.Address)
		require.NoError(b, err)
		keys[i] = pk.(ed25519.PubKey)
	}
	// The proposer's side, once: what ProcessProposal receives.
	tx := proposerBundle(b, layout, commit, epoch, n)

	var sigs, ours, keeperTime time.Duration
	for b.Loop() {
		start := time.Now()
		for i, v := range commit.Votes {
			if !keys[i].VerifySignature(testcommit.SignBytes(chainID, height, commit.Round, v.VoteExtension), v.ExtensionSignature) {
				b.Fatal("signature")
			}
		}
		sigs += time.Since(start)

		block, _ := ctx.WithBlockHeight(height + 1).CacheContext()
		start = time.Now()
		bundle, err := proposals.Decode(tx)
		require.NoError(b, err)
		checker := ve.NewChecker(block, k, height)
		e, size, err := checker.Group()
		require.NoError(b, err)
		require.True(b, e == bundle.Epoch && size == bundle.Members)
		ec, err := bundle.Commit(last)
		require.NoError(b, err)
		agg := make([]aggregate.Vote, 0, len(ec.Votes))
		for _, v := range ec.Votes {
			verdicts, abstains, err := checker.Verdicts(v.VoteExtension)
			if err != nil {
				b.Fatal(err)
			}
			agg = append(agg, aggregate.Vote{Power: v.Validator.Power, Verdicts: verdicts, Abstain: abstains})
		}
		packed, err := aggregate.Packed(agg, size)
		require.NoError(b, err)
		if !bytes.Equal(packed, bundle.Samples) {
			b.Fatal("samples")
		}
		ours += time.Since(start)
		start = time.Now()
		_, _, err = k.ApplyHealth(block, e, size, bundle.Samples, bundle.Service)
		require.NoError(b, err)
		keeperTime += time.Since(start)
	}
	b.ReportMetric(float64(sigs.Microseconds())/float64(b.N), "µs-signatures/op")
	b.ReportMetric(float64(ours.Microseconds())/float64(b.N), "µs-verify+aggregate/op")
	b.ReportMetric(float64(keeperTime.Microseconds())/float64(b.N), "µs-keeper/op")
	b.ReportMetric(float64(ours)/float64(sigs), "ratio")
	b.ReportMetric(float64(ours+keeperTime)/float64(sigs), "ratio-with-keeper")
	b.ReportMetric(float64(len(tx)), "bundle-bytes")
}

// proposerBundle is the bundle PrepareProposal would inject for commit in
// layout.
func proposerBundle(b *testing.B, layout proposals.Layout, commit abci.ExtendedCommitInfo, epoch uint64, n int) []byte {
	b.Helper()
	votes := make([]aggregate.Vote, 0, len(commit.Votes))
	for _, v := range commit.Votes {
		ext, err := ve.Decode(v.VoteExtension, n)
		require.NoError(b, err)
		votes = append(votes, aggregate.Vote{Power: v.Validator.Power, Verdicts: ext.Verdicts})
	}
	packed, err := aggregate.Packed(votes, n)
	require.NoError(b, err)
	bundle, err := proposals.NewBundle(layout, commit, epoch, n, packed, nil)
	require.NoError(b, err)
	tx, err := proposals.Encode(bundle)
	require.NoError(b, err)
	return tx
}
