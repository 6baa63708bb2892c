package preblock_test

import (
	"slices"
	"testing"
	"time"

	"github.com/cometbft/cometbft/crypto/ed25519"
	"github.com/stretchr/testify/require"

	"github.com/inferenced/inferenced/abci/internal/testcommit"
	"github.com/inferenced/inferenced/abci/ve"
	"github.com/inferenced/inferenced/x/inference/aggregate"
	"github.com/inferenced/inferenced/x/inference/keeper/keepertest"
	"github.com/inferenced/inferenced/x/inference/types"
	"github.com/inferenced/inferenced/x/inference/verdict"
)

// BenchmarkAttestationBlock is one block's attestation work at 150
// validators x 1,000 executors, against the signature checks that
// baseapp.ValidateVoteExtensions already does on the same commit: verify
// each extension (ve.Checker: decode, canonical, epoch, length), aggregate,
// map the samples to executors and apply them to the breaker, as
// ProcessProposal and this package's pre-blocker do. 1% of the executors
// are reported missed. The ratio metric is ours / signatures (goal <= 0.10).
func BenchmarkAttestationBlock(b *testing.B) {
	b.Run("identical-extensions", func(b *testing.B) { benchAttestation(b, false) })
	b.Run("all-distinct-extensions", func(b *testing.B) { benchAttestation(b, true) })
}

// benchAttestation: with distinct, every validator reports one more
// executor unknown than the next, so no two extensions are equal (the
// worst case for the tally).
func benchAttestation(b *testing.B, distinct bool) {
	const validators, height, chainID = 150, int64(2), "bench"
	k, ctx, _ := keepertest.Network(b, 1000, breakerParams(), nil)
	epoch, n, err := k.VoteGroup(ctx, height)
	require.NoError(b, err)
	vs := make([]verdict.Verdict, n)
	for i := range vs {
		vs[i] = verdict.OK
		if i%100 == 0 {
			vs[i] = verdict.Miss
		}
	}
	vals := make([]testcommit.Validator, validators)
	for i := range vals {
		vals[i] = testcommit.New([]byte{byte(i), byte(i >> 8)}, 100)
	}
	// Equal powers: CometBFT orders the votes by address.
	commit := testcommit.Commit(b, chainID, height, 0, vals, func(i int) []byte {
		own := slices.Clone(vs)
		if distinct {
			own[500+i] = verdict.Unknown
		}
		packed, err := verdict.Pack(own)
		require.NoError(b, err)
		ext, err := ve.Encode(types.HealthVoteExtension{EpochIndex: epoch, Verdicts: packed})
		require.NoError(b, err)
		return ext
	})
	keys := make([]ed25519.PubKey, len(commit.Votes))
	lookup := testcommit.Keys(vals)
	for i, v := range commit.Votes {
		pk, err := lookup(v.Validator.Address)
		require.NoError(b, err)
		keys[i] = pk.(ed25519.PubKey)
	}

	var sigs, ours time.Duration
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
		checker := ve.NewChecker(block, k, height)
		e, size, err := checker.Group()
		require.NoError(b, err)
		agg := make([]aggregate.Vote, 0, len(commit.Votes))
		for _, v := range commit.Votes {
			verdicts, err := checker.Verdicts(v.VoteExtension)
			if err != nil {
				b.Fatal(err)
			}
			agg = append(agg, aggregate.Vote{Power: v.Validator.Power, Verdicts: verdicts})
		}
		samples, err := aggregate.Aggregate(agg, size)
		require.NoError(b, err)
		bundleSamples, err := aggregate.Pack(samples, size)
		require.NoError(b, err)
		attested, err := k.AttestedSamples(block, e, bundleSamples)
		require.NoError(b, err)
		require.NoError(b, k.ApplyHealth(block, attested))
		ours += time.Since(start)
	}
	b.ReportMetric(float64(sigs.Microseconds())/float64(b.N), "µs-signatures/op")
	b.ReportMetric(float64(ours.Microseconds())/float64(b.N), "µs-attestation/op")
	b.ReportMetric(float64(ours)/float64(sigs), "ratio")
}
