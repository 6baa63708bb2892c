package breakerstore

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/inferenced/inferenced/x/inference/service"
	"github.com/inferenced/inferenced/x/inference/verdict"
)

// TestScansVisitWhatTheNaiveLoopsVisit: the word-at-a-time scans visit
// exactly the indices, in the order, that a loop over every member
// visits, and stop at the first error, on groups of 0 to 400 members
// (every tail length of a word), miss and rate densities from none to
// most, the invalid verdict 3 among them, and sets of indices from empty
// to dense, some reaching past the group.
func TestScansVisitWhatTheNaiveLoopsVisit(t *testing.T) {
	r := rand.New(rand.NewPCG(25, 32))
	for c := range 3000 {
		members := r.IntN(401)
		density := []int{0, 1, 10, 300, 900}[r.IntN(5)] // per 1,000
		vs := make([]byte, verdict.PackedLen(members))
		rates := make([]service.Report, members)
		for i := range members {
			v := verdict.OK
			switch x := r.IntN(1000); {
			case x < density:
				v = verdict.Miss
			case x < density+density/3:
				v = verdict.Unknown
			case x == 999:
				v = 3 // no encoder writes it: neither a miss nor skipped wrongly
			}
			vs[i/4] |= byte(v) << (2 * (i % 4))
			if r.IntN(1000) < density {
				rates[i] = []service.Report{service.Unknown, 1, 57, service.MaxRate}[r.IntN(4)]
			}
		}
		var in bitmap
		for range r.IntN(3) * r.IntN(members/4+2) {
			in = in.with(uint32(r.IntN(members + 40)))
		}
		name := fmt.Sprintf("case %d: %d members, density %d, %d indices in", c, members, density, len(in))

		var wantMiss, wantRated []uint32
		for i := range uint32(members) {
			if verdict.At(vs, int(i)) == verdict.Miss || in.has(i) {
				wantMiss = append(wantMiss, i)
			}
			if rates[i] != 0 || in.has(i) {
				wantRated = append(wantRated, i)
			}
		}
		require.Equal(t, wantMiss, collect(t, func(v func(uint32) error) error { return eachMissOrIn(vs, members, in, v) }, -1), name)
		require.Equal(t, wantRated, collect(t, func(v func(uint32) error) error { return eachRatedOrIn(rates, in, v) }, -1), name)
		if len(wantMiss) > 0 {
			stop := r.IntN(len(wantMiss))
			require.Equal(t, wantMiss[:stop+1], collect(t, func(v func(uint32) error) error { return eachMissOrIn(vs, members, in, v) }, stop), name)
		}
		if len(wantRated) > 0 {
			stop := r.IntN(len(wantRated))
			require.Equal(t, wantRated[:stop+1], collect(t, func(v func(uint32) error) error { return eachRatedOrIn(rates, in, v) }, stop), name)
		}
	}
}

var errStop = errors.New("stop")

// collect runs scan and returns what it visited; with stop >= 0, the
// visit of the stop-th index fails and scan must return that error.
func collect(t *testing.T, scan func(func(uint32) error) error, stop int) []uint32 {
	var got []uint32
	err := scan(func(i uint32) error {
		got = append(got, i)
		if len(got)-1 == stop {
			return errStop
		}
		return nil
	})
	if stop >= 0 {
		require.ErrorIs(t, err, errStop)
	} else {
		require.NoError(t, err)
	}
	return got
}

func TestHasMissAndWord32(t *testing.T) {
	for _, tc := range []struct {
		name string
		vs   []verdict.Verdict
		want bool
	}{
		{"all ok", repeat(verdict.OK, 32), false},
		{"all unknown", repeat(verdict.Unknown, 32), false},
		{"all invalid 3", repeat(3, 32), false},
		{"one miss first", append([]verdict.Verdict{verdict.Miss}, repeat(verdict.OK, 31)...), true},
		{"one miss last", append(repeat(verdict.OK, 31), verdict.Miss), true},
		{"miss among 3s", append(repeat(3, 31), verdict.Miss), true},
	} {
		var w uint64
		for i, v := range tc.vs {
			w |= uint64(v) << (2 * i)
		}
		require.Equal(t, tc.want, hasMiss(w), tc.name)
	}
	b := bitmap(nil).with(0).with(31).with(32).with(70)
	require.Equal(t, uint32(1|1<<31), b.word32(0))
	require.Equal(t, uint32(1), b.word32(1))
	require.Equal(t, uint32(1<<6), b.word32(2))
	require.Equal(t, uint32(0), b.word32(3))
	require.Equal(t, byte(0), b.byteAt(100))
}

func repeat(v verdict.Verdict, n int) []verdict.Verdict {
	out := make([]verdict.Verdict, n)
	for i := range out {
		out[i] = v
	}
	return out
}
