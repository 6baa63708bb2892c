package aggregate

import (
	"math/rand/v2"
	"testing"
)

// TestTransposeGivesEachExecutorItsSubset: on random words, the subset
// byte of every executor holds exactly the lists whose slot bit is set.
func TestTransposeGivesEachExecutorItsSubset(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	for range 2000 {
		var masks [groupSize]uint64 // list l's bit at the low bit of each slot
		var pairs [groupSize / 2]uint64
		for l := range masks {
			masks[l] = rng.Uint64() & lowBits
			pairs[l/2] |= masks[l] << (l % 2)
		}
		subsets := transpose(&pairs)
		for e := range 32 {
			got := byte(subsets[e%4] >> (8 * (e / 4)))
			var want byte
			for l, m := range masks {
				want |= byte(m>>(2*e)&1) << l
			}
			if got != want {
				t.Fatalf("executor %d: subset %08b, want %08b", e, got, want)
			}
		}
	}
}

// TestSubsetPowerSumsEachSubset: every entry of the table is the sum of
// its lists' power, for groups of one to eight lists (the lists past the
// group weigh nothing).
func TestSubsetPowerSumsEachSubset(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for size := 1; size <= groupSize; size++ {
		group := make([]Vote, size)
		for l := range group {
			group[l].Power = rng.Int64N(1 << 40)
		}
		var sums subsetPower
		sums.of(group)
		for set := range len(sums) {
			var want uint64
			for l := range group {
				if set>>l&1 != 0 {
					want += uint64(group[l].Power)
				}
			}
			if sums[set] != want {
				t.Fatalf("group of %d, subset %08b: %d, want %d", size, set, sums[set], want)
			}
		}
	}
}
