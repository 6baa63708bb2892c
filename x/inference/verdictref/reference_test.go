package verdictref

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/inferenced/inferenced/x/inference/verdict"
)

func packing(t *testing.T, vs ...verdict.Verdict) []byte {
	t.Helper()
	p, err := verdict.Pack(vs)
	require.NoError(t, err)
	return p
}

// TestNextAndForTable: which samples become the reference, and which one
// the extensions of a vote height read.
func TestNextAndForTable(t *testing.T) {
	const ok, miss, unknown = verdict.OK, verdict.Miss, verdict.Unknown
	s1 := packing(t, ok, miss, ok, unknown, ok)
	s2 := packing(t, miss, miss, ok, ok, ok)
	var r Reference
	step := func(height int64, epoch uint64, members int, packed []byte, wantChanged bool) {
		t.Helper()
		next, changed, err := r.Next(height, epoch, members, packed)
		require.NoError(t, err)
		require.Equal(t, wantChanged, changed, "height %d", height)
		if !changed {
			require.Equal(t, r, next)
		}
		r = next
	}
	for _, tc := range []struct {
		name       string
		apply      func()
		voteHeight int64
		epoch      uint64
		n          int
		want       []byte
	}{
		{"nothing recorded: none", func() {}, 10, 1, 5, nil},
		{"samples at 10 are the reference of vote height 11", func() { step(10, 1, 5, s1, true) }, 11, 1, 5, s1},
		{"but not of vote height 10, made before block 10", func() {}, 10, 1, 5, nil},
		{"the same samples again change nothing", func() { step(11, 1, 5, s1, false) }, 12, 1, 5, s1},
		{"new samples at 12: vote height 12 still reads the ones before", func() { step(12, 1, 5, s2, true) }, 12, 1, 5, s1},
		{"vote height 13 reads the new ones", func() {}, 13, 1, 5, s2},
		{"another epoch: none", func() {}, 13, 2, 5, nil},
		{"another group size: none", func() {}, 13, 1, 6, nil},
		{"the same samples about another epoch are new", func() { step(13, 2, 5, s2, true) }, 14, 2, 5, s2},
		{"and the previous epoch's are one block old", func() {}, 13, 1, 5, s2},
		{"a third change forgets the oldest", func() { step(14, 2, 5, s1, true) }, 13, 1, 5, nil},
	} {
		tc.apply()
		got, err := r.For(tc.voteHeight, tc.epoch, tc.n)
		require.NoError(t, err, tc.name)
		require.Equal(t, tc.want, got, tc.name)
	}
	_, _, err := r.Next(14, 2, 5, s2)
	require.Error(t, err, "samples at a height not after the current ones")
	_, _, err = r.Next(20, 2, 0, nil)
	require.Error(t, err, "a group of 0")
	_, _, err = r.Next(20, 2, 5, []byte{0xff, 0xff})
	require.Error(t, err, "samples that are not a packing of the group")
}

// TestForIsTheSameBeforeAndAfterTheBlock: over random histories (blocks
// with new samples, the same ones, none, a new epoch), the reference the
// extensions of vote height H read from the state after H-1 (ExtendVote)
// is the one they read from the state after H (the next block's
// proposal), whatever block H did. Both read it for the same group
// (keeper.VoteGroup answers alike on both sides).
func TestForIsTheSameBeforeAndAfterTheBlock(t *testing.T) {
	rng := rand.New(rand.NewPCG(25, 25))
	seen := 0
	for history := range 200 {
		var r Reference
		n, epoch := 1+rng.IntN(40), uint64(1)
		var pool [][]byte
		for range 3 {
			vs := make([]verdict.Verdict, n)
			for i := range vs {
				vs[i] = verdict.Verdict(rng.IntN(3))
			}
			p, err := verdict.Pack(vs)
			require.NoError(t, err)
			pool = append(pool, p)
		}
		for h := int64(2); h < 200; h++ {
			voteEpoch := epoch
			before, err := r.For(h, voteEpoch, n)
			require.NoError(t, err)
			switch x := rng.IntN(10); {
			case x < 5: // the block carries samples, maybe the same
				r, _, err = r.Next(h, epoch, n, pool[rng.IntN(len(pool))])
				require.NoError(t, err)
			case x == 5: // the block opens a new epoch
				epoch++
			}
			after, err := r.For(h, voteEpoch, n)
			require.NoError(t, err)
			require.Equal(t, before, after, "history %d, vote height %d", history, h)
			if before != nil {
				seen++
			}
		}
	}
	require.Greater(t, seen, 10_000, "the histories must mostly have a reference")
}

// TestDecodeIsStrict: Encode and Decode round-trip; Decode refuses what
// Encode would not write (attacks named: another version, a cut, a
// trailing byte, an entry that is empty but has content, a previous entry
// not older than the current one, samples that are not canonical, a group
// of 0).
func TestDecodeIsStrict(t *testing.T) {
	s := packing(t, verdict.OK, verdict.Miss, verdict.OK)
	r, _, err := Reference{}.Next(5, 1, 3, s)
	require.NoError(t, err)
	r, _, err = r.Next(7, 1, 3, packing(t, verdict.Miss, verdict.Miss, verdict.OK))
	require.NoError(t, err)
	bz, err := Encode(r)
	require.NoError(t, err)
	back, err := Decode(bz)
	require.NoError(t, err)
	require.Equal(t, r, back)
	empty, err := Encode(Reference{})
	require.NoError(t, err)
	got, err := Decode(empty)
	require.NoError(t, err)
	require.Equal(t, Reference{}, got)

	for name, bad := range map[string]Reference{
		"an empty entry with content":            {Current: Entry{Epoch: 1}},
		"previous not older":                     {Current: r.Previous, Previous: r.Current},
		"previous without current":               {Previous: r.Previous},
		"samples not canonical (packed, sparse)": {Current: Entry{Since: 3, Epoch: 1, Members: 40, Samples: onePacked(t)}},
		"a group of 0":                           {Current: Entry{Since: 3, Epoch: 1}},
	} {
		_, err := Encode(bad)
		require.Error(t, err, name)
	}
	for name, in := range map[string][]byte{
		"nothing":          nil,
		"another version":  append([]byte{2}, bz[1:]...),
		"cut":              bz[:len(bz)-1],
		"a trailing byte":  append(bytes.Clone(bz), 0),
		"previous swapped": swapEntries(t, r),
	} {
		_, err := Decode(in)
		require.Error(t, err, name)
	}
}

// onePacked is a packing of 40 with one miss: its canonical compact form
// is the sparse one.
func onePacked(t *testing.T) []byte {
	vs := make([]verdict.Verdict, 40)
	for i := range vs {
		vs[i] = verdict.OK
	}
	vs[7] = verdict.Miss
	return packing(t, vs...)
}

func swapEntries(t *testing.T, r Reference) []byte {
	t.Helper()
	good, err := Encode(Reference{Current: r.Current})
	require.NoError(t, err)
	cur := good[1 : len(good)-24]
	prevOnly, err := Encode(Reference{Current: r.Previous})
	require.NoError(t, err)
	prev := prevOnly[1 : len(prevOnly)-24]
	return append(append([]byte{version}, prev...), cur...)
}

// FuzzDecode: Decode never panics, and whatever it accepts Encode writes
// back byte for byte (one encoding per value).
func FuzzDecode(f *testing.F) {
	r, _, _ := Reference{}.Next(5, 1, 9, make([]byte, verdict.PackedLen(9)))
	bz, _ := Encode(r)
	f.Add(bz)
	empty, _ := Encode(Reference{})
	f.Add(empty)
	f.Fuzz(func(t *testing.T, in []byte) {
		r, err := Decode(in)
		if err != nil {
			return
		}
		out, err := Encode(r)
		if err != nil || !bytes.Equal(out, in) {
			t.Fatalf("%x decodes to %+v, which encodes to %x (%v)", in, r, out, err)
		}
	})
}
