package keeper_test

import (
	"bytes"
	"slices"
	"testing"
	"time"

	abci "github.com/cometbft/cometbft/abci/types"
	"github.com/cometbft/cometbft/crypto/ed25519"
	"github.com/cometbft/cometbft/libs/protoio"
	cmtproto "github.com/cometbft/cometbft/proto/tendermint/types"
	"github.com/stretchr/testify/require"

	"github.com/inferenced/inferenced/abci/ve"
	"github.com/inferenced/inferenced/x/inference/aggregate"
	"github.com/inferenced/inferenced/x/inference/types"
	"github.com/inferenced/inferenced/x/inference/verdict"
)

// BenchmarkAttestationBlock is one block's attestation work at 150
// validators x 1,000 executors, against the signature checks that
// baseapp.ValidateVoteExtensions already does on the same commit: verify
// each extension (decode, canonical, epoch, length), aggregate, map the
// samples to executors and apply them to the breaker. 1% of the executors
// are reported missed. The ratio metric is ours / signatures (goal <= 0.10).
func BenchmarkAttestationBlock(b *testing.B) {
	b.Run("identical-extensions", func(b *testing.B) { benchAttestation(b, false) })
	b.Run("all-distinct-extensions", func(b *testing.B) { benchAttestation(b, true) })
}

// benchAttestation: with distinct, every validator reports one more
// executor unknown than the next, so no two extensions are equal (the
// worst case for the tally).
func benchAttestation(b *testing.B, distinct bool) {
	const validators, height = 150, int64(2)
	k, ctx, _ := benchNetwork(b, 1000, nil)
	epoch, n, err := k.VoteGroup(ctx, height)
	require.NoError(b, err)
	vs := make([]verdict.Verdict, n)
	for i := range vs {
		vs[i] = verdict.OK
		if i%100 == 0 {
			vs[i] = verdict.Miss
		}
	}
	extFor := func(i int) []byte {
		own := slices.Clone(vs)
		if distinct {
			own[500+i] = verdict.Unknown
		}
		packed, err := verdict.Pack(own)
		require.NoError(b, err)
		ext, err := ve.Encode(types.HealthVoteExtension{EpochIndex: epoch, Verdicts: packed})
		require.NoError(b, err)
		return ext
	}
	signBytes := func(e []byte) []byte {
		bz, err := protoio.MarshalDelimited(&cmtproto.CanonicalVoteExtension{Extension: e, Height: height, ChainId: "bench"})
		require.NoError(b, err)
		return bz
	}
	type signedVote struct {
		key ed25519.PubKey
		vi  abci.ExtendedVoteInfo
	}
	var votes []signedVote
	for i := range validators {
		priv := ed25519.GenPrivKeyFromSecret([]byte{byte(i), byte(i >> 8)})
		ext := extFor(i)
		sig, err := priv.Sign(signBytes(ext))
		require.NoError(b, err)
		votes = append(votes, signedVote{key: priv.PubKey().(ed25519.PubKey), vi: abci.ExtendedVoteInfo{
			Validator: abci.Validator{Address: priv.PubKey().Address(), Power: 100}, VoteExtension: ext,
			ExtensionSignature: sig, BlockIdFlag: cmtproto.BlockIDFlagCommit,
		}})
	}
	slices.SortFunc(votes, func(a, c signedVote) int { return bytes.Compare(a.vi.Validator.Address, c.vi.Validator.Address) })

	var sigs, ours time.Duration
	for b.Loop() {
		start := time.Now()
		for _, v := range votes {
			if !v.key.VerifySignature(signBytes(v.vi.VoteExtension), v.vi.ExtensionSignature) {
				b.Fatal("signature")
			}
		}
		sigs += time.Since(start)

		block, _ := ctx.WithBlockHeight(height + 1).CacheContext()
		start = time.Now()
		e, size, err := k.VoteGroup(block, height)
		require.NoError(b, err)
		agg := make([]aggregate.Vote, 0, len(votes))
		checker := ve.NewChecker(e, size)
		for _, v := range votes {
			verdicts, err := checker.Verdicts(v.vi.VoteExtension)
			if err != nil {
				b.Fatal(err)
			}
			agg = append(agg, aggregate.Vote{Power: v.vi.Validator.Power, Verdicts: verdicts})
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
