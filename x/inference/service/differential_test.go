package service

import (
	"bytes"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestDifferentialEqualsLegacy: on 3,000 random commits (lists of every density,
// few or many distinct rates, duplicates, validators without a list,
// powers from 0 to the overflow limit, equal and distinct, totals at,
// above and below the votes' power, groups from 0 to a few hundred
// executors and a few of 10,000) and on corruptions of them, Median,
// Encoded and Suspected return exactly what the legacy median returns:
// the same rates, the same bytes, the same flags, the same error.
func TestDifferentialEqualsLegacy(t *testing.T) {
	rng := rand.New(rand.NewPCG(61, 4))
	runs, failures, refused := 3000, 0, 0
	if testing.Short() {
		runs = 600
	}
	for run := range runs {
		n := rng.IntN(300)
		switch {
		case run%400 == 0:
			n = 10000
		case run%7 == 0:
			n = rng.IntN(5)
		}
		votes, total := randomServiceCommit(t, rng, n)
		if rng.IntN(4) == 0 {
			corruptReports(rng, votes, n)
		}
		if _, err := legacyMedian(votes, total, n); err != nil {
			refused++
		}
		maxRated := []int{-1, 0, rng.IntN(20), 1000}[rng.IntN(4)]
		if !sameMedianAsLegacy(t, votes, total, n, maxRated) {
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

// sameMedianAsLegacy compares Median, Encoded and Suspected with the
// legacy ones on a commit, reporting any difference.
func sameMedianAsLegacy(t testing.TB, votes []Vote, total uint64, n, maxRated int) bool {
	t.Helper()
	got, err := Median(votes, total, n)
	want, wantErr := legacyMedian(votes, total, n)
	if errText(err) != errText(wantErr) || !slices.Equal(got, want) {
		t.Errorf("n=%d, %d votes: Median %v (%v), legacy %v (%v)", n, len(votes), got, err, want, wantErr)
		return false
	}
	gotBz, err := Encoded(votes, total, n)
	wantBz, wantErr := legacyEncoded(votes, total, n)
	if errText(err) != errText(wantErr) || !bytes.Equal(gotBz, wantBz) {
		t.Errorf("n=%d: Encoded %x (%v), legacy %x (%v)", n, gotBz, err, wantBz, wantErr)
		return false
	}
	flags, err := Suspected(votes, total, n, maxRated)
	wantFlags, wantErr := legacySuspected(votes, total, n, maxRated)
	if errText(err) != errText(wantErr) || !slices.Equal(flags, wantFlags) {
		t.Errorf("n=%d, maxRated %d: Suspected %v (%v), legacy %v (%v)", n, maxRated, flags, err, wantFlags, wantErr)
		return false
	}
	return true
}

// randomServiceCommit draws up to 40 votes (sometimes 150) on a group of n
// and the commit's total power.
func randomServiceCommit(tb testing.TB, rng *rand.Rand, n int) ([]Vote, uint64) {
	nVals := rng.IntN(41)
	if rng.IntN(20) == 0 {
		nVals = 150
	}
	powers, sum := servicePowers(rng, nVals)
	fewRates := rng.IntN(2) == 0 // ties: a few rates shared by many
	votes := make([]Vote, nVals)
	var last []byte
	for v := range votes {
		votes[v].Power = powers[v]
		switch {
		case rng.IntN(8) == 0: // no list
		case last != nil && rng.IntN(3) == 0:
			votes[v].Reports = slices.Clone(last) // agrees with the previous one
		default:
			rs := randomReports(rng, n)
			if fewRates {
				for i, r := range rs {
					if r.Known() && r > 0 {
						rs[i] = []Report{1, 15, 18, 50, MaxRate}[rng.IntN(5)]
					}
				}
			}
			bz, err := Encode(Clamp(rs))
			if err != nil {
				tb.Fatal(err)
			}
			votes[v].Reports, last = bz, bz
		}
	}
	total := sum
	switch rng.IntN(8) {
	case 0:
		total = sum + rng.Uint64N(sum+1) // absent validators
	case 1:
		total = sum - min(sum, 1) // the votes exceed the commit: refused unless empty
	case 2:
		total = math.MaxUint64/3 + uint64(rng.IntN(2)) // at and just past the limit
	}
	return votes, total
}

// servicePowers: equal or distinct, from 0 to near the overflow limit
// (MaxUint64/3 for the total), sometimes negative; and their sum (of the
// non-negative ones).
func servicePowers(rng *rand.Rand, nVals int) ([]int64, uint64) {
	out := make([]int64, nVals)
	mode := rng.IntN(5)
	var sum uint64
	for i := range out {
		switch mode {
		case 0:
			out[i] = 100
		case 1:
			out[i] = 1 + rng.Int64N(1000)
		case 2:
			out[i] = rng.Int64N(3)
		case 3: // the total near MaxUint64/3
			out[i] = int64(uint64(math.MaxUint64/3)/uint64(max(nVals, 1))) - rng.Int64N(3)
		default:
			out[i] = 1 + rng.Int64N(math.MaxInt64/int64(3*max(nVals, 1)))
		}
		sum += uint64(out[i])
	}
	if nVals > 0 && rng.IntN(40) == 0 {
		out[rng.IntN(nVals)] = -1
	}
	return out, sum
}

// corruptReports damages one or two lists: a random byte, a cut, an extra
// byte, a wrong marker, random bytes, or every executor unknown written
// with the marker (the non-canonical second form of an empty list).
func corruptReports(rng *rand.Rand, votes []Vote, n int) {
	if len(votes) == 0 {
		return
	}
	for range 1 + rng.IntN(2) {
		v := &votes[rng.IntN(len(votes))]
		bz := slices.Clone(v.Reports)
		switch rng.IntN(6) {
		case 0:
			if len(bz) > 0 {
				bz[rng.IntN(len(bz))] = byte(rng.IntN(256))
			}
		case 1:
			bz = bz[:rng.IntN(len(bz)+1)]
		case 2:
			bz = append(bz, byte(rng.IntN(256)))
		case 3:
			if len(bz) > 0 {
				bz[0] = 1 + byte(rng.IntN(255))
			}
		case 4:
			bz = make([]byte, rng.IntN(MaxLen(n)+2))
			for i := range bz {
				bz[i] = byte(rng.IntN(256))
			}
		default:
			bz = append([]byte{marker}, bytes.Repeat([]byte{1}, n)...)
		}
		v.Reports = bz
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// FuzzMedianEqualsLegacy: up to 24 votes from the fuzzer's bytes, each
// either raw bytes cut from raw (any list, mostly refused) or, when encode
// is set, reports read from raw (255 unknown, otherwise a rate modulo 101)
// clamped and encoded; powers and total from seed. Median, Encoded and
// Suspected equal the legacy ones, errors included.
func FuzzMedianEqualsLegacy(f *testing.F) {
	f.Add([]byte{0, 10, 30, 40, 255, 0, 100}, []byte{3, 3, 3, 0}, uint16(4), uint64(1), true)
	f.Add([]byte{0, 2, 5, 1, 255, 3}, []byte{6, 2, 9}, uint16(3), uint64(2), false)
	f.Add(bytes.Repeat([]byte{18, 0, 0, 50, 255, 0, 0, 0}, 40), bytes.Repeat([]byte{40}, 12), uint16(300), uint64(3), true)
	f.Fuzz(func(t *testing.T, raw, layout []byte, n16 uint16, seed uint64, encode bool) {
		n := int(n16 % 1024)
		rng := rand.New(rand.NewPCG(seed, seed>>32))
		var votes []Vote
		var sum uint64
		off := 0
		for _, b := range layout[:min(len(layout), 24)] {
			v := Vote{Power: rng.Int64N(1000)}
			if rng.IntN(8) == 0 {
				v.Power = rng.Int64N(math.MaxInt64/72 + 1)
			}
			sum += uint64(v.Power)
			k := int(b) % (MaxLen(n) + 2)
			if encode {
				k = n
			}
			chunk := make([]byte, k)
			for i := range chunk {
				if len(raw) > 0 {
					chunk[i] = raw[(off+i)%len(raw)]
				}
			}
			off += k
			if encode && b%4 != 0 {
				rs := make([]Report, n)
				for i, x := range chunk {
					rs[i] = Report(x % (byte(MaxRate) + 1))
					if x == 255 {
						rs[i] = Unknown
					}
				}
				bz, err := Encode(Clamp(rs))
				if err != nil {
					t.Fatal(err)
				}
				chunk = bz
			} else if encode {
				chunk = nil // no list
			}
			v.Reports = chunk
			votes = append(votes, v)
		}
		total := sum + rng.Uint64N(sum/2+1)
		if rng.IntN(16) == 0 {
			total = sum - min(sum, 1)
		}
		sameMedianAsLegacy(t, votes, total, n, []int{-1, 0, 3, 300}[seed%4])
	})
}
