// Package testcommit builds signed extended commits for the abci tests and
// benchmarks: validators with real ed25519 keys, extensions signed over the
// bytes CometBFT signs, and commits in CometBFT's vote order. It is for
// tests only; nothing in a node imports it.
package testcommit

import (
	"bytes"
	"cmp"
	"errors"
	"slices"
	"testing"

	abci "github.com/cometbft/cometbft/abci/types"
	cmtcrypto "github.com/cometbft/cometbft/crypto"
	"github.com/cometbft/cometbft/crypto/ed25519"
	cmtproto "github.com/cometbft/cometbft/proto/tendermint/types"
	cmttypes "github.com/cometbft/cometbft/types"
)

// Validator is a consensus key with its voting power.
type Validator struct {
	Key   ed25519.PrivKey
	Power int64
}

// New is the validator whose key derives from secret.
func New(secret []byte, power int64) Validator {
	return Validator{Key: ed25519.GenPrivKeyFromSecret(secret), Power: power}
}

// WithPowers is one validator per power, the i-th keyed by the secret {i}.
func WithPowers(powers ...int64) []Validator {
	out := make([]Validator, len(powers))
	for i, p := range powers {
		out[i] = New([]byte{byte(i)}, p)
	}
	return out
}

// Address is the validator's consensus address.
func (v Validator) Address() []byte { return v.Key.PubKey().Address() }

// Info is the validator as a commit vote names it.
func (v Validator) Info() abci.Validator { return abci.Validator{Address: v.Address(), Power: v.Power} }

// SignBytes is what a validator signs for its extension of the block at
// height in round: CometBFT's own encoding, so that tests check the
// handlers against the real thing.
func SignBytes(chainID string, height int64, round int32, ext []byte) []byte {
	return cmttypes.VoteExtensionSignBytes(chainID, &cmtproto.Vote{
		Type: cmtproto.PrecommitType, Height: height, Round: round, Extension: ext,
	})
}

// Sign is v's signature of ext for chainID, height and round.
func (v Validator) Sign(tb testing.TB, chainID string, height int64, round int32, ext []byte) []byte {
	tb.Helper()
	sig, err := v.Key.Sign(SignBytes(chainID, height, round, ext))
	if err != nil {
		tb.Fatal(err)
	}
	return sig
}

// Vote is v's commit vote for the block with extension ext, signed.
func (v Validator) Vote(tb testing.TB, chainID string, height int64, round int32, ext []byte) abci.ExtendedVoteInfo {
	tb.Helper()
	return abci.ExtendedVoteInfo{
		Validator:          v.Info(),
		VoteExtension:      ext,
		ExtensionSignature: v.Sign(tb, chainID, height, round, ext),
		BlockIdFlag:        cmtproto.BlockIDFlagCommit,
	}
}

// Compare is CometBFT's vote order: power descending, then address.
func Compare(a, b Validator) int {
	if c := cmp.Compare(b.Power, a.Power); c != 0 {
		return c
	}
	return bytes.Compare(a.Address(), b.Address())
}

// Sorted is vals in CometBFT's vote order.
func Sorted(vals []Validator) []Validator {
	out := slices.Clone(vals)
	slices.SortFunc(out, Compare)
	return out
}

// Commit is the extended commit of round at height in which every
// validator of vals, in CometBFT's order, voted for the block with the
// extension ext(i) (i its index in that order), signed.
func Commit(tb testing.TB, chainID string, height int64, round int32, vals []Validator, ext func(i int) []byte) abci.ExtendedCommitInfo {
	tb.Helper()
	ec := abci.ExtendedCommitInfo{Round: round}
	for i, v := range Sorted(vals) {
		ec.Votes = append(ec.Votes, v.Vote(tb, chainID, height, round, ext(i)))
	}
	return ec
}

// Keys looks the validators' public keys up by consensus address, as the
// proposal handlers' KeyLookup does in staking.
func Keys(vals []Validator) func(addr []byte) (cmtcrypto.PubKey, error) {
	return func(addr []byte) (cmtcrypto.PubKey, error) {
		for _, v := range vals {
			if bytes.Equal(v.Address(), addr) {
				return v.Key.PubKey(), nil
			}
		}
		return nil, errors.New("unknown validator")
	}
}
