package proposals

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	abci "github.com/cometbft/cometbft/abci/types"
	cmtproto "github.com/cometbft/cometbft/proto/tendermint/types"
	cmttypes "github.com/cometbft/cometbft/types"

	"github.com/inferenced/inferenced/abci/internal/testcommit"
	"github.com/inferenced/inferenced/abci/ve"
)

const (
	testChain  = "inferenced-test"
	testHeight = int64(41)
	testRound  = int32(0)
)

// validators: powers 40, 30, 20, 10 (CometBFT order: power descending).
func validators() []testcommit.Validator { return testcommit.WithPowers(40, 30, 20, 10) }

func keysOf(vals []testcommit.Validator) KeyLookup { return testcommit.Keys(vals) }

// okCheck accepts any extension that starts with 'v' and returns it as
// verdicts; the real check is ve.Checker.Check.
func okCheck(ext []byte) (ve.Checked, error) {
	if len(ext) == 0 {
		return ve.Checked{Abstains: true}, nil
	}
	if ext[0] != 'v' {
		return ve.Checked{}, errors.New("invalid extension")
	}
	return ve.Checked{Verdicts: ext}, nil
}

// commit builds a signed extended commit where every validator voted for
// the block with extension "v<i>".
func commit(t *testing.T, vals []testcommit.Validator) abci.ExtendedCommitInfo {
	t.Helper()
	return testcommit.Commit(t, testChain, testHeight, testRound, vals, func(i int) []byte { return []byte{'v', byte(i)} })
}

func check(ec abci.ExtendedCommitInfo, last abci.CommitInfo, keys KeyLookup) (Signed, error) {
	return Check(ec, last, testChain, testHeight, keys, okCheck)
}

func TestCheckAcceptsAValidCommit(t *testing.T) {
	vals := validators()
	ec := commit(t, vals)
	s, err := check(ec, CommitInfoOf(ec), keysOf(vals))
	if err != nil {
		t.Fatal(err)
	}
	if s.ValidPower != 100 || s.TotalPower != 100 || len(s.Votes) != 4 || s.Votes[0].Power != 40 {
		t.Fatalf("%+v", s)
	}
}

func TestCheckToleratesAnAbsentVote(t *testing.T) {
	vals := validators()
	ec := commit(t, vals)
	ec.Votes[3] = abci.ExtendedVoteInfo{Validator: ec.Votes[3].Validator, BlockIdFlag: cmtproto.BlockIDFlagAbsent}
	s, err := check(ec, CommitInfoOf(ec), keysOf(vals))
	if err != nil || s.ValidPower != 90 {
		t.Fatalf("%+v %v", s, err)
	}
}

// TestCheckRequiresMoreThanTwoThirds: extensions of exactly 2/3 of the
// power are not enough (attack: a proposer drops the third validator's
// extension to sway the majority of what remains).
func TestCheckRequiresMoreThanTwoThirds(t *testing.T) {
	vals := testcommit.WithPowers(1, 1, 1)
	ec := testcommit.Commit(t, testChain, testHeight, testRound, vals, func(int) []byte { return []byte("v") })
	if _, err := check(ec, CommitInfoOf(ec), keysOf(vals)); err != nil {
		t.Fatalf("3 of 3: %v", err)
	}
	ec.Votes[2].VoteExtension, ec.Votes[2].ExtensionSignature = nil, nil
	if _, err := check(ec, CommitInfoOf(ec), keysOf(vals)); err == nil {
		t.Fatal("extensions of 2 of 3 power accepted")
	}
}

// One named case per attack on a bundle's commit: each is rejected by Check,
// and Prune (the honest proposer) removes what it can.
func TestCheckRejectsAttacks(t *testing.T) {
	vals := validators()
	cases := []struct {
		name  string
		edit  func(ec *abci.ExtendedCommitInfo, last *abci.CommitInfo)
		keys  KeyLookup
		want  string
		prune bool // Prune makes the commit acceptable again
	}{
		{"forged signature", func(ec *abci.ExtendedCommitInfo, _ *abci.CommitInfo) {
			ec.Votes[1].ExtensionSignature = vals[0].Sign(t, testChain, testHeight, testRound, ec.Votes[1].VoteExtension)
		}, nil, "bad extension signature", true},
		{"tampered extension", func(ec *abci.ExtendedCommitInfo, _ *abci.CommitInfo) {
			ec.Votes[2].VoteExtension = []byte{'v', 9}
		}, nil, "bad extension signature", true},
		{"signed for another height", func(ec *abci.ExtendedCommitInfo, _ *abci.CommitInfo) {
			ec.Votes[3].ExtensionSignature = vals[3].Sign(t, testChain, testHeight-1, testRound, ec.Votes[3].VoteExtension)
		}, nil, "bad extension signature", true},
		{"signed for another chain", func(ec *abci.ExtendedCommitInfo, _ *abci.CommitInfo) {
			ec.Votes[3].ExtensionSignature = vals[3].Sign(t, "other", testHeight, testRound, ec.Votes[3].VoteExtension)
		}, nil, "bad extension signature", true},
		{"invalid extension, validly signed", func(ec *abci.ExtendedCommitInfo, _ *abci.CommitInfo) {
			ec.Votes[3].VoteExtension = []byte{'x'}
			ec.Votes[3].ExtensionSignature = vals[3].Sign(t, testChain, testHeight, testRound, ec.Votes[3].VoteExtension)
		}, nil, "invalid extension", true},
		{"validator that has just left", func(*abci.ExtendedCommitInfo, *abci.CommitInfo) {},
			keysOf(vals[:3]), "unknown validator", true},
		{"duplicate validator", func(ec *abci.ExtendedCommitInfo, last *abci.CommitInfo) {
			ec.Votes[3] = ec.Votes[2]
			*last = CommitInfoOf(*ec)
		}, nil, "appears twice", false},
		{"wrong power", func(ec *abci.ExtendedCommitInfo, _ *abci.CommitInfo) {
			ec.Votes[0].Validator.Power = 41
		}, nil, "does not match the last commit", false},
		{"wrong order", func(ec *abci.ExtendedCommitInfo, last *abci.CommitInfo) {
			ec.Votes[0], ec.Votes[1] = ec.Votes[1], ec.Votes[0]
			*last = CommitInfoOf(*ec)
		}, nil, "not ordered", false},
		{"vote marked absent that was for the block", func(ec *abci.ExtendedCommitInfo, _ *abci.CommitInfo) {
			ec.Votes[0].BlockIdFlag = cmtproto.BlockIDFlagAbsent
		}, nil, "does not match the last commit", false},
		{"extension on an absent vote", func(ec *abci.ExtendedCommitInfo, last *abci.CommitInfo) {
			ec.Votes[3].BlockIdFlag = cmtproto.BlockIDFlagAbsent
			*last = CommitInfoOf(*ec)
		}, nil, "not for the block", true},
		{"another round", func(ec *abci.ExtendedCommitInfo, _ *abci.CommitInfo) { ec.Round = 1 }, nil,
			"does not match the last commit", false},
		{"a vote dropped", func(ec *abci.ExtendedCommitInfo, _ *abci.CommitInfo) { ec.Votes = ec.Votes[:3] }, nil,
			"does not match the last commit", false},
		{"proposer prunes honest extensions below 2/3", func(ec *abci.ExtendedCommitInfo, _ *abci.CommitInfo) {
			ec.Votes[0].VoteExtension, ec.Votes[0].ExtensionSignature = nil, nil
		}, nil, "need more than 2/3", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ec := commit(t, vals)
			last := CommitInfoOf(ec)
			c.edit(&ec, &last)
			keys := c.keys
			if keys == nil {
				keys = keysOf(vals)
			}
			_, err := check(ec, last, keys)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err %v, want %q", err, c.want)
			}
			if !c.prune {
				return
			}
			pruned, signed, err := Prune(ec, testChain, testHeight, keys, okCheck)
			if err != nil {
				t.Fatalf("pruning: %v", err)
			}
			s, err := check(pruned, last, keys)
			if err != nil {
				t.Fatalf("after pruning: %v", err)
			}
			if s.ValidPower >= 100 {
				t.Fatalf("pruning kept the bad extension: %+v", s)
			}
			if !reflect.DeepEqual(s, signed) {
				t.Fatalf("Prune's verdict %+v, Check's %+v", signed, s)
			}
		})
	}
}

// The signatures are checked against exactly what CometBFT signs: bytes
// produced by CometBFT's own VoteExtensionSignBytes, in a later round, pass.
func TestCheckAcceptsSignaturesOverCometBFTSignBytes(t *testing.T) {
	vals := validators()
	ec := abci.ExtendedCommitInfo{Round: 2}
	for i, v := range vals {
		ext := []byte{'v', byte(i)}
		msg := cmttypes.VoteExtensionSignBytes(testChain, &cmtproto.Vote{
			Type: cmtproto.PrecommitType, Height: testHeight, Round: 2, Extension: ext,
		})
		sig, err := v.Key.Sign(msg)
		if err != nil {
			t.Fatal(err)
		}
		ec.Votes = append(ec.Votes, abci.ExtendedVoteInfo{
			Validator:     v.Info(),
			VoteExtension: ext, ExtensionSignature: sig, BlockIdFlag: cmtproto.BlockIDFlagCommit,
		})
	}
	s, err := check(ec, CommitInfoOf(ec), keysOf(vals))
	if err != nil || s.ValidPower != 100 {
		t.Fatalf("%+v %v", s, err)
	}
	ec.Round = 1 // same signatures claimed for another round
	if _, err := check(ec, CommitInfoOf(ec), keysOf(vals)); err == nil {
		t.Fatal("signatures of round 2 accepted for round 1")
	}
}
