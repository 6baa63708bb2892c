package aggregate

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/inferenced/inferenced/x/inference/verdict"
)

// BenchmarkTally is one block's liveness tally (Packed, what the proposal
// handlers call) at 150 validators of distinct power, legacy and new side
// by side, on lists in their canonical compact form:
//   - identical: everyone the same 1% missed (one distinct list);
//   - all-distinct: the same, and each validator one more executor unknown
//     of its own (150 distinct sparse lists);
//   - random-30pct: each validator its own random 30% missed (150 distinct
//     packings, nothing shared: the most exceptions honest lists carry);
//   - correlated-30pct: a common 30% missed, each validator flipping its
//     own random 1% of the verdicts (150 distinct packings that agree).
func BenchmarkTally(b *testing.B) {
	impls := []struct {
		name   string
		packed func([]Vote, int) ([]byte, error)
	}{{"legacy", legacyPacked}, {"new", Packed}}
	for _, sc := range tallyScenarios {
		for _, n := range []int{1000, 10000} {
			votes := scenarioVotes(b, sc, 150, n)
			want, err := legacyPacked(votes, n)
			if err != nil {
				b.Fatal(err)
			}
			for _, impl := range impls {
				b.Run(fmt.Sprintf("scenario=%s/executors=%d/impl=%s", sc, n, impl.name), func(b *testing.B) {
					b.ReportAllocs()
					for b.Loop() {
						got, err := impl.packed(votes, n)
						if err != nil || string(got) != string(want) {
							b.Fatalf("%s: %v, or samples differ from legacy", impl.name, err)
						}
					}
				})
			}
		}
	}
}

var tallyScenarios = []string{"identical", "all-distinct", "random-30pct", "correlated-30pct"}

// scenarioVotes is the commit of a scenario: validators of power 100+i,
// each list compacted as its extension carries it.
func scenarioVotes(tb testing.TB, scenario string, validators, n int) []Vote {
	tb.Helper()
	votes := make([]Vote, validators)
	for i := range votes {
		vs := scenarioList(scenario, n, i)
		packed, err := verdict.Pack(vs)
		if err != nil {
			tb.Fatal(err)
		}
		bz, err := verdict.Compact(packed, n)
		if err != nil {
			tb.Fatal(err)
		}
		votes[i] = Vote{Power: int64(100 + i), Verdicts: bz}
	}
	return votes
}

// scenarioList is validator i's verdicts on n executors in a scenario.
func scenarioList(scenario string, n, i int) []verdict.Verdict {
	vs := make([]verdict.Verdict, n)
	own := rand.New(rand.NewPCG(uint64(i), 41))
	common := rand.New(rand.NewPCG(0, 42))
	for e := range vs {
		vs[e] = verdict.OK
		switch scenario {
		case "identical", "all-distinct":
			if e%100 == 0 {
				vs[e] = verdict.Miss
			}
		case "random-30pct":
			if own.IntN(10) < 3 {
				vs[e] = verdict.Miss
			}
		case "correlated-30pct":
			if common.IntN(10) < 3 {
				vs[e] = verdict.Miss
			}
			if own.IntN(100) == 0 {
				vs[e] = verdict.OK + verdict.Miss - vs[e] // flip
			}
		}
	}
	if scenario == "all-distinct" {
		vs[(n/2+i)%n] = verdict.Unknown
	}
	return vs
}
