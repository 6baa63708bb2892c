package service

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// BenchmarkMedian is one block's service median (Encoded, what the
// proposal handlers call) at 150 validators of distinct power, legacy and
// new side by side, on lists as honest validators attest them (Attest
// under the floor ExtendVote uses):
//   - honest: each executor fails 3.25% of 16 canaries (the honest
//     baseline): each list holds the ~1.3% of executors that stand out by
//     chance;
//   - 10pct-high: the same, and every validator sees every tenth executor
//     fail half or more of its canaries (lists clamped to MaxExceptions at
//     10,000 executors, so each keeps its own highest 256 of the 1,000);
//   - contested: every validator rates the same MaxExceptions executors
//     at rates of its own, all of them contested (rated above 0% by more
//     than half of the power): the median's most work per list.
func BenchmarkMedian(b *testing.B) {
	impls := []struct {
		name    string
		encoded func([]Vote, uint64, int) ([]byte, error)
	}{{"legacy", legacyEncoded}, {"new", Encoded}}
	for _, sc := range []string{"honest", "10pct-high", "contested"} {
		for _, n := range []int{1000, 10000} {
			votes, total := honestVotes(b, sc, 150, n)
			want, err := legacyEncoded(votes, total, n)
			if err != nil {
				b.Fatal(err)
			}
			for _, impl := range impls {
				b.Run(fmt.Sprintf("scenario=%s/executors=%d/impl=%s", sc, n, impl.name), func(b *testing.B) {
					b.ReportAllocs()
					for b.Loop() {
						got, err := impl.encoded(votes, total, n)
						if err != nil || !slices.Equal(got, want) {
							b.Fatalf("%s: %v, or rates differ from legacy", impl.name, err)
						}
					}
				})
			}
		}
	}
}

// benchFloor is ve.ServiceFloor, what ExtendVote attests under (not
// imported: abci/ve imports this package).
const benchFloor Report = 15

// honestVotes is a commit of validators of power 100+i attesting service
// in a scenario, and its total power.
func honestVotes(tb testing.TB, scenario string, validators, n int) ([]Vote, uint64) {
	tb.Helper()
	votes := make([]Vote, validators)
	var total uint64
	for i := range votes {
		r := rand.New(rand.NewPCG(uint64(i), 13))
		rates := make([]Report, n)
		for e := range rates {
			misses := 0
			for range 16 {
				if r.IntN(10_000) < 325 {
					misses++
				}
			}
			switch {
			case scenario == "10pct-high" && e%10 == 0:
				misses = 8 + r.IntN(9)
			case scenario == "contested" && e%(n/MaxExceptions) == 0 && e/(n/MaxExceptions) < int(MaxExceptions):
				misses = 4 + r.IntN(13)
			}
			rates[e] = Rate(misses, 16)
		}
		bz, err := Attest(rates, benchFloor)
		if err != nil {
			tb.Fatal(err)
		}
		votes[i] = Vote{Power: int64(100 + i), Reports: bz}
		total += uint64(100 + i)
	}
	return votes, total
}
