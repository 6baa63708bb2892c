package proposals

import (
	"context"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	abci "github.com/cometbft/cometbft/abci/types"
	cmtproto "github.com/cometbft/cometbft/proto/tendermint/types"

	"github.com/inferenced/inferenced/abci/internal/testcommit"
	"github.com/inferenced/inferenced/abci/ve"
	"github.com/inferenced/inferenced/x/inference/aggregate"
	"github.com/inferenced/inferenced/x/inference/types"
	"github.com/inferenced/inferenced/x/inference/verdict"
)

// TestPropertyByzantineMinorityThroughPruneAndCheck runs the proposer's
// whole path (Prune, Check, aggregate) over random validator sets whose
// Byzantine members hold less than a third of the power and lie, send
// garbage, forge signatures or abstain, in commits holding at least two
// thirds. Whenever a bundle can be built: no sample lacks the vote of an
// honest validator in the commit, and every verdict all honest validators
// in the commit share is produced.
func TestPropertyByzantineMinorityThroughPruneAndCheck(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 4))
	const epoch = 3
	built := 0
	for run := range 300 {
		nVals, n := 4+rng.IntN(20), 1+rng.IntN(12)
		type member struct {
			v   testcommit.Validator
			byz bool
		}
		var set []member
		var total, byzPower int64
		for i := range nVals {
			m := member{v: testcommit.New([]byte{byte(run), byte(run >> 8), byte(i)}, 1+rng.Int64N(100))}
			total += m.v.Power
			set = append(set, m)
		}
		for _, i := range rng.Perm(nVals) {
			if 3*(byzPower+set[i].v.Power) < total && rng.IntN(2) == 0 {
				set[i].byz = true
				byzPower += set[i].v.Power
			}
		}
		slices.SortFunc(set, func(a, b member) int { return testcommit.Compare(a.v, b.v) })
		truth := make([]verdict.Verdict, n)
		unanimous := make([]bool, n)
		for e := range truth {
			truth[e], unanimous[e] = verdict.Verdict(1+rng.IntN(2)), rng.IntN(2) == 0
		}
		var ec abci.ExtendedCommitInfo
		var commitPower int64
		honestVoted := make([][3]bool, n)
		var vals []testcommit.Validator
		for _, i := range rng.Perm(nVals) {
			vals = append(vals, set[i].v)
		}
		for _, m := range set {
			vote := abci.ExtendedVoteInfo{Validator: m.v.Info()}
			if 3*commitPower >= 2*total && rng.IntN(3) == 0 {
				vote.BlockIdFlag = cmtproto.BlockIDFlagAbsent
				ec.Votes = append(ec.Votes, vote)
				continue
			}
			commitPower += m.v.Power
			vs := make([]verdict.Verdict, n)
			for e := range vs {
				switch {
				case m.byz && unanimous[e]:
					vs[e] = 3 - truth[e] // the opposite of what every honest validator says
				case m.byz || !unanimous[e]:
					vs[e] = verdict.Verdict(rng.IntN(3))
				default:
					vs[e] = truth[e]
				}
				if !m.byz {
					honestVoted[e][vs[e]] = true
				}
			}
			packed, _ := verdict.Pack(vs)
			ext, _ := ve.Encode(types.HealthVoteExtension{EpochIndex: epoch, Verdicts: packed}, n)
			signer := m.v
			if m.byz {
				switch rng.IntN(4) {
				case 0:
					ext = []byte{0xde, 0xad} // garbage, validly signed
				case 1:
					signer = set[rng.IntN(nVals)].v // forged signature
				case 2:
					ext = nil // abstains
				}
			}
			vote = signer.Vote(t, testChain, testHeight, testRound, ext)
			vote.Validator = m.v.Info()
			ec.Votes = append(ec.Votes, vote)
		}
		check := ve.NewChecker(context.Background(), group{epoch: epoch, n: n}, testHeight).Check
		pruned, proposed, pruneErr := Prune(ec, testChain, testHeight, keysOf(vals), check)
		// Through the wire: what validators check is the commit rebuilt
		// from the bundle's bytes and their own last commit, in either
		// layout.
		rebuilt := throughTheWire(t, []Layout{LayoutV2, LayoutV3}[run%2], pruned, epoch, n)
		signed, err := Check(rebuilt, CommitInfoOf(ec), testChain, testHeight, keysOf(vals), check)
		if (err == nil) != (pruneErr == nil) {
			t.Fatalf("run %d: the proposer's verdict (%v) is not the validators' (%v)", run, pruneErr, err)
		}
		if err != nil {
			continue // fewer than 2/3 valid after pruning: the proposer sends an empty bundle
		}
		if !reflect.DeepEqual(proposed, signed) {
			t.Fatalf("run %d: the proposer counted %+v, the validators %+v", run, proposed, signed)
		}
		built++
		samples, err := aggregate.Aggregate(signed.Votes, n)
		if err != nil {
			t.Fatal(err)
		}
		produced := make([]verdict.Verdict, n)
		for _, s := range samples {
			v := verdict.OK
			if s.Miss {
				v = verdict.Miss
			}
			if !honestVoted[s.Index][v] {
				t.Fatalf("run %d: executor %d got %s without an honest vote for it", run, s.Index, v)
			}
			produced[s.Index] = v
		}
		for e := range truth {
			if unanimous[e] && produced[e] != truth[e] {
				t.Fatalf("run %d: executor %d: all honest said %s, produced %s", run, e, truth[e], produced[e])
			}
		}
	}
	if built < 100 {
		t.Fatalf("only %d of 300 runs built a bundle: the property was hardly exercised", built)
	}
	t.Logf("%d of 300 runs built a bundle", built)
}

// throughTheWire encodes pruned in a bundle of layout, decodes it and
// rebuilds the commit from the bundle and the last commit (pruned's
// validators and flags).
func throughTheWire(t *testing.T, layout Layout, pruned abci.ExtendedCommitInfo, epoch uint64, n int) abci.ExtendedCommitInfo {
	t.Helper()
	b, err := NewBundle(layout, pruned, epoch, n, make([]byte, verdict.PackedLen(n)), nil)
	if err != nil {
		t.Fatal(err)
	}
	bz, err := Encode(b)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Decode(bz)
	if err != nil || got.Layout != layout {
		t.Fatalf("decoded %s: %v", got.Layout, err)
	}
	rebuilt, err := got.Commit(CommitInfoOf(pruned))
	if err != nil {
		t.Fatal(err)
	}
	return rebuilt
}
