package aggregate

import (
	"bytes"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/inferenced/inferenced/x/inference/verdict"
)

// TestDifferentialEqualsLegacy: on random commits (mixed sparse and packed
// lists, canonical or not, duplicates, abstentions, empty lists, powers
// from 0 to the overflow limit, equal and distinct, groups from 0 to a few
// hundred executors and a few of 10,000) and on corruptions of them,
// Aggregate and Packed return exactly what the legacy tally returns: the
// same samples, the same bytes, and the same error.
func TestDifferentialEqualsLegacy(t *testing.T) {
	rng := rand.New(rand.NewPCG(51, 8))
	runs, failures, refused := 6000, 0, 0
	if testing.Short() {
		runs = 1000
	}
	for run := range runs {
		n := rng.IntN(300)
		switch {
		case run%500 == 0:
			n = 10000
		case run%7 == 0:
			n = rng.IntN(9) // tiny groups: padding and empty lists
		}
		votes := randomCommit(t, rng, n)
		if rng.IntN(4) == 0 {
			corrupt(rng, votes, n)
		}
		if _, err := legacyPacked(votes, n); err != nil {
			refused++
		}
		if !sameAsLegacy(t, votes, n) {
			failures++
		}
	}
	// Both sides of the comparison are exercised: accepted and refused input.
	if refused < runs/10 || refused > runs/2 {
		t.Fatalf("%d of %d commits refused: the generator drifted", refused, runs)
	}
	if failures > 0 {
		t.Fatalf("%d of %d commits differ from legacy", failures, runs)
	}
}

// sameAsLegacy compares Aggregate and Packed with the legacy tally on
// votes, reporting any difference.
func sameAsLegacy(t testing.TB, votes []Vote, n int) bool {
	t.Helper()
	gotS, errS := Aggregate(votes, n)
	wantS, wantErrS := legacyAggregate(votes, n)
	gotP, errP := Packed(votes, n)
	wantP, wantErrP := legacyPacked(votes, n)
	if errText(errS) != errText(wantErrS) || errText(errP) != errText(wantErrP) {
		t.Errorf("n=%d, %d votes: errors %v / %v, legacy %v / %v", n, len(votes), errS, errP, wantErrS, wantErrP)
		return false
	}
	for _, target := range []error{verdict.ErrOversized, verdict.ErrSparse, verdict.ErrLength} {
		if errors.Is(errS, target) != errors.Is(wantErrS, target) {
			t.Errorf("n=%d: error %v is %v, legacy %v", n, errS, target, wantErrS)
			return false
		}
	}
	if !slices.Equal(gotS, wantS) || !bytes.Equal(gotP, wantP) {
		t.Errorf("n=%d, %d votes: samples %v, packed %x; legacy %v, %x", n, len(votes), gotS, gotP, wantS, wantP)
		return false
	}
	return true
}

// randomCommit draws up to 40 votes (sometimes 150) on a group of n.
func randomCommit(tb testing.TB, rng *rand.Rand, n int) []Vote {
	nVals := rng.IntN(41)
	if rng.IntN(20) == 0 {
		nVals = 150
	}
	powers := randomPowers(rng, nVals)
	density := []int{0, 1, 5, 30, 60, 100}[rng.IntN(6)]
	missShare := rng.IntN(101) // of the exceptions, the share that are misses
	votes := make([]Vote, nVals)
	var last []verdict.Verdict
	for i := range votes {
		votes[i].Power = powers[i]
		if rng.IntN(10) == 0 {
			votes[i].Abstain = true
			if rng.IntN(2) == 0 {
				votes[i].Verdicts = randomBytes(rng, rng.IntN(2*verdict.PackedLen(n)+2)) // ignored
			}
			continue
		}
		vs := make([]verdict.Verdict, n)
		for e := range vs {
			vs[e] = verdict.OK
			if rng.IntN(100) < density {
				vs[e] = verdict.Unknown
				if rng.IntN(100) < missShare {
					vs[e] = verdict.Miss
				}
			}
		}
		if last != nil && rng.IntN(3) == 0 {
			vs = slices.Clone(last) // a validator that agrees with the previous one
		}
		last = vs
		packed, err := verdict.Pack(vs)
		if err != nil {
			tb.Fatal(err)
		}
		votes[i].Verdicts = packed // a direct caller's packing, canonical or not
		if rng.IntN(4) > 0 {
			if votes[i].Verdicts, err = verdict.Compact(packed, n); err != nil {
				tb.Fatal(err)
			}
		}
	}
	return votes
}

// randomPowers: equal or distinct, from 0 to near the overflow limit
// (MaxUint64/2 for the total), sometimes just past it or negative.
func randomPowers(rng *rand.Rand, nVals int) []int64 {
	out := make([]int64, nVals)
	limit := uint64(math.MaxUint64 / 2)
	mode := rng.IntN(6)
	for i := range out {
		switch mode {
		case 0:
			out[i] = 100 // equal
		case 1:
			out[i] = 1 + rng.Int64N(1000)
		case 2:
			out[i] = rng.Int64N(3) // zeros and ones
		case 3, 4: // near the limit: total within a few units of MaxUint64/2
			share := limit / uint64(max(nVals, 1))
			out[i] = int64(min(share, math.MaxInt64)) - rng.Int64N(3)
			if mode == 4 && i == 0 {
				out[i] += 2 + rng.Int64N(int64(nVals)+2) // sometimes past it
			}
		default:
			out[i] = 1 + rng.Int64N(math.MaxInt64/int64(max(2*nVals, 1)))
		}
	}
	if nVals > 0 && rng.IntN(40) == 0 {
		out[rng.IntN(nVals)] = -1 - rng.Int64N(5)
	}
	return out
}

// corrupt damages one or two lists the way a buggy or hostile direct
// caller could: a value 3, set padding, a random byte, a cut, an extra
// byte, or a list of the wrong form.
func corrupt(rng *rand.Rand, votes []Vote, n int) {
	if len(votes) == 0 {
		return
	}
	for range 1 + rng.IntN(2) {
		v := &votes[rng.IntN(len(votes))]
		bz := slices.Clone(v.Verdicts)
		switch rng.IntN(6) {
		case 0:
			if len(bz) > 0 {
				bz[rng.IntN(len(bz))] |= 3 << (2 * rng.IntN(4))
			}
		case 1:
			if rem := n % 4; rem != 0 && len(bz) == verdict.PackedLen(n) {
				bz[len(bz)-1] |= 1 << (2*rem + rng.IntN(8-2*rem))
			}
		case 2:
			if len(bz) > 0 {
				bz[rng.IntN(len(bz))] = byte(rng.IntN(256))
			}
		case 3:
			bz = bz[:rng.IntN(len(bz)+1)]
		case 4:
			bz = append(bz, byte(rng.IntN(256)))
		default:
			bz = randomBytes(rng, rng.IntN(verdict.PackedLen(n)+1))
		}
		v.Verdicts = bz
	}
}

func randomBytes(rng *rand.Rand, k int) []byte {
	out := make([]byte, k)
	for i := range out {
		out[i] = byte(rng.IntN(256))
	}
	return out
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// FuzzAggregateEqualsLegacy: up to 24 votes cut from the fuzzer's bytes
// (layout: one byte per vote, 255 abstains, an even byte takes a whole
// packing, an odd one a shorter cut, so sparse lists and bad ones too;
// sanitize turns values 3 into misses and clears the padding, so valid
// packings are common), of powers from seed: Aggregate and Packed equal
// the legacy tally, samples, bytes and errors.
func FuzzAggregateEqualsLegacy(f *testing.F) {
	f.Add(bytesOf(0x59, 64), []byte{0, 0, 2, 4, 6, 8, 10, 12, 14, 16}, uint16(100), uint64(1), true)
	f.Add([]byte{0x01, 0x04, 0x00, 0x03, 0x99, 0x66}, []byte{1, 3, 255, 0, 0}, uint16(37), uint64(7), false)
	f.Add(bytesOf(0xaa, 300), bytesOf(0, 20), uint16(1000), uint64(99), true)
	f.Fuzz(func(t *testing.T, raw, layout []byte, n16 uint16, seed uint64, sanitize bool) {
		n := int(n16 % 2048)
		votes := fuzzVotes(raw, layout, n, seed, sanitize)
		sameAsLegacy(t, votes, n)
	})
}

func fuzzVotes(raw, layout []byte, n int, seed uint64, sanitize bool) []Vote {
	rng := rand.New(rand.NewPCG(seed, seed>>32))
	size := verdict.PackedLen(n)
	var votes []Vote
	off := 0
	for _, b := range layout[:min(len(layout), 24)] {
		v := Vote{Power: rng.Int64N(1000)}
		if rng.IntN(8) == 0 {
			v.Power = rng.Int64N(math.MaxInt64/24 + 1)
		}
		switch {
		case b == 255:
			v.Abstain = true
		case b%2 == 0:
			v.Verdicts = cycle(raw, off, size)
		default:
			v.Verdicts = cycle(raw, off, int(b/2)%(size+2))
		}
		off += len(v.Verdicts)
		if sanitize && len(v.Verdicts) == size {
			for j, x := range v.Verdicts {
				v.Verdicts[j] = x &^ (x & (x >> 1) & 0x55) // 3 becomes 2
			}
			if rem := n % 4; rem != 0 {
				v.Verdicts[size-1] &= 1<<(2*rem) - 1
			}
		}
		votes = append(votes, v)
	}
	return votes
}

// cycle is k bytes of raw from off on, wrapping around (zeros when raw is
// empty).
func cycle(raw []byte, off, k int) []byte {
	out := make([]byte, k)
	for i := range out {
		if len(raw) > 0 {
			out[i] = raw[(off+i)%len(raw)]
		}
	}
	return out
}
