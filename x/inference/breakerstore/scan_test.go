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
// visits (splitAttested: and set aside exactly the held members' misses
// without a queued outcome), and stop at the first error, on groups of 0
// to 400 members (every tail length of a word), miss and rate densities
// from none to most, the invalid verdict 3 among them, and held and
// queued sets from empty to dense, some reaching past the group.
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
		var held, queued bitmap
		for range r.IntN(3) * r.IntN(members/4+2) {
			held = held.with(uint32(r.IntN(members + 40)))
		}
		for range r.IntN(2) * r.IntN(members/8+2) {
			queued = queued.with(uint32(r.IntN(members + 40)))
		}
		in := held.union(queued)
		name := fmt.Sprintf("case %d: %d members, density %d, %d held, %d queued", c, members, density, len(held), len(queued))

		type visit struct {
			i    uint32
			miss bool
		}
		var wantOne []visit
		var wantBulk bitmap
		var wantRated []uint32
		for i := range uint32(members) {
			v := verdict.At(vs, int(i))
			switch {
			case v == verdict.Miss && held.has(i) && !queued.has(i):
				wantBulk = wantBulk.with(i)
			case v == verdict.Miss, v == verdict.OK && in.has(i):
				wantOne = append(wantOne, visit{i, v == verdict.Miss})
			}
			if rates[i] != 0 || in.has(i) {
				wantRated = append(wantRated, i)
			}
		}
		var gotOne []visit
		bulk, err := splitAttested(vs, members, held, queued, func(i uint32, miss bool) error {
			gotOne = append(gotOne, visit{i, miss})
			return nil
		})
		require.NoError(t, err, name)
		require.Equal(t, wantOne, gotOne, name)
		require.Equal(t, wantBulk, bulk, name)
		require.Equal(t, wantRated, collect(t, func(v func(uint32) error) error { return eachRatedOrIn(rates, in, v) }, -1), name)
		if len(wantOne) > 0 {
			stop, calls := r.IntN(len(wantOne)), 0
			_, err := splitAttested(vs, members, held, queued, func(uint32, bool) error {
				if calls++; calls-1 == stop {
					return errStop
				}
				return nil
			})
			require.ErrorIs(t, err, errStop, name)
			require.Equal(t, stop+1, calls, "%s: no visit after the error", name)
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

func TestSlotMasksAndWord32(t *testing.T) {
	for _, tc := range []struct {
		name           string
		vs             []verdict.Verdict
		wantMiss, want uint32
	}{
		{"all ok", repeat(verdict.OK, 32), 0, 0xffff_ffff},
		{"all unknown", repeat(verdict.Unknown, 32), 0, 0},
		{"all invalid 3: neither", repeat(3, 32), 0, 0},
		{"one miss first", append([]verdict.Verdict{verdict.Miss}, repeat(verdict.OK, 31)...), 1, 0xffff_fffe},
		{"one miss last, among 3s", append(repeat(3, 31), verdict.Miss), 1 << 31, 0},
	} {
		var w uint64
		for i, v := range tc.vs {
			w |= uint64(v) << (2 * i)
		}
		require.Equal(t, tc.wantMiss, slotMask(missBits(w)>>1), tc.name)
		require.Equal(t, tc.want, slotMask(okBits(w)), tc.name)
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
