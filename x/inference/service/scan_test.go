package service

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// eachSums is what scan computes, through Each: whether Each accepts bz,
// the unknowns it visits, and each exception's power added to sums (rated
// [0], unknown [1]).
func eachSums(bz []byte, n int, sums [][2]uint64, p uint64) (int, bool) {
	unknowns := 0
	err := Each(bz, n, func(i int, r Report) {
		u := 0
		if r == Unknown {
			u, unknowns = 1, unknowns+1
		}
		if sums != nil {
			sums[i][u] += p
		}
	})
	return unknowns, err == nil
}

// scanAgrees compares scan with Each on one list, and Check with
// checkEach (the error's text included), reporting any difference.
func scanAgrees(t testing.TB, bz []byte, n int) {
	t.Helper()
	if err, want := Check(bz, n), checkEach(bz, n); len(bz) > 0 && errText(err) != errText(want) {
		t.Fatalf("Check(%x, %d) = %v, checkEach %v", bz, n, err, want)
	}
	if len(bz) == 0 || n < 0 || n > 1<<16 {
		return
	}
	got, want := make([][2]uint64, n), make([][2]uint64, n)
	u, _, ok := scan(bz, n, sink{sums: got, p: 7})
	wu, wok := eachSums(bz, n, want, 7)
	if ok != wok || (ok && (u != wu || !slices.Equal(got, want))) {
		t.Fatalf("scan(%x, %d) = %d %v, Each %d %v", bz, n, u, ok, wu, wok)
	}
	if nu, _, nok := scan(bz, n, sink{}); nok != ok || (ok && nu != u) {
		t.Fatalf("scan(%x, %d) without sums = %d %v, with %d %v", bz, n, nu, nok, u, ok)
	}
	checkedAgrees(t, bz, n, got)
}

// TestScanAgreesWithEach: on honest lists (the benchmark's), random lists
// of every density and group size, and corruptions of them (each attack a
// Byzantine validator can put in its extension: a cut, a byte changed or
// added, a wrong marker, random bytes, the all-unknown list written with
// the marker, a rate of 0% or above 100%, a non-minimal or over-long
// varint, a gap past the group, one exception too many), scan accepts
// exactly what Each accepts and tallies what it visits, and Check refuses
// with checkEach's words.
func TestScanAgreesWithEach(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 11))
	for _, n := range []int{1000, 10000} {
		votes, _ := honestVotes(t, "10pct-high", 20, n)
		for _, v := range votes {
			scanAgrees(t, v.Reports, n)
		}
	}
	attacks := [][]byte{
		{0, 0, 0}, {0, 0, 101}, {0, 0, 255}, {0, 0x80, 0x00, 5}, {0, 0x81, 0x80, 0x01, 5},
		{0, 0x82, 0x7f, 5, 1}, {0, 0xfe, 0xff, 0xff, 0xff, 0x0f}, {1, 1, 1}, {0, 1, 1},
		append([]byte{0}, bytes.Repeat([]byte{0, 5}, MaxExceptions+1)...),
	}
	for _, bz := range attacks {
		for _, n := range []int{0, 1, 2, 3, 200, 2 * MaxExceptions, 40000} {
			scanAgrees(t, bz, n)
		}
	}
	for run := range 4000 {
		n := rng.IntN(300)
		if run%50 == 0 {
			n = 10000 + rng.IntN(20000)
		}
		votes := []Vote{{Reports: mustEncode(t, randomReports(rng, n))}}
		if rng.IntN(3) == 0 {
			corruptReports(rng, votes, n)
		}
		scanAgrees(t, votes[0].Reports, n)
	}
}

func mustEncode(tb testing.TB, rs []Report) []byte {
	tb.Helper()
	bz, err := Encode(Clamp(rs))
	if err != nil {
		tb.Fatal(err)
	}
	return bz
}

// FuzzScanAgreesWithEach: on any bytes and group size, scan accepts what
// Each accepts, counts its unknowns and adds each exception's power where
// Each visits it; Check refuses with checkEach's words.
func FuzzScanAgreesWithEach(f *testing.F) {
	f.Add([]byte{0, 2, 28, 0x81, 0x01, 5, 3}, uint16(300))
	f.Add([]byte{0, 0x80, 0x00, 5}, uint16(300))
	f.Add([]byte{0, 1, 1}, uint16(2))
	f.Add([]byte{0, 0xff, 0x7f, 1}, uint16(20000))
	f.Fuzz(func(t *testing.T, bz []byte, n16 uint16) {
		scanAgrees(t, bz, int(n16))
	})
}

// BenchmarkCheck is ve's check of one block's lists (Check on each of 150
// honest lists), through Each (before) and scan (now), side by side.
func BenchmarkCheck(b *testing.B) {
	for _, sc := range []string{"honest", "10pct-high"} {
		for _, n := range []int{1000, 10000} {
			votes, _ := honestVotes(b, sc, 150, n)
			for _, impl := range []struct {
				name  string
				check func([]byte, int) error
			}{{"each", checkEach}, {"scan", Check}} {
				b.Run(fmt.Sprintf("scenario=%s/executors=%d/impl=%s", sc, n, impl.name), func(b *testing.B) {
					for b.Loop() {
						for _, v := range votes {
							if err := impl.check(v.Reports, n); err != nil {
								b.Fatal(err)
							}
						}
					}
				})
			}
		}
	}
}
