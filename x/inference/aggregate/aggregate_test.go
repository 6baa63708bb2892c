package aggregate

import (
	"bytes"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/inferenced/inferenced/x/inference/verdict"
)

func pack(t testing.TB, vs ...verdict.Verdict) []byte {
	t.Helper()
	b, err := verdict.Pack(vs)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// compact is the canonical compact form of vs, as an extension carries it.
func compact(t testing.TB, vs ...verdict.Verdict) []byte {
	t.Helper()
	b, err := verdict.Compact(pack(t, vs...), len(vs))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

const (
	u = verdict.Unknown
	o = verdict.OK
	m = verdict.Miss
)

func TestAggregateTable(t *testing.T) {
	cases := []struct {
		name  string
		votes []Vote
		n     int
		want  []Sample
	}{
		{"unanimous", []Vote{{Power: 10, Verdicts: pack(t, m, o)}, {Power: 10, Verdicts: pack(t, m, o)}, {Power: 10, Verdicts: pack(t, m, o)}}, 2,
			[]Sample{{0, true}, {1, false}}},
		{"exactly half is not a majority", []Vote{{Power: 10, Verdicts: pack(t, m)}, {Power: 10, Verdicts: pack(t, o)}}, 1, nil},
		{"an abstainer counts in C", []Vote{{Power: 10, Verdicts: pack(t, m)}, {Power: 10, Verdicts: pack(t, m)}, {Power: 25, Abstain: true}}, 1, nil},
		{"unknown counts in C", []Vote{{Power: 10, Verdicts: pack(t, m)}, {Power: 10, Verdicts: pack(t, u)}, {Power: 1, Verdicts: pack(t, m)}}, 1,
			[]Sample{{0, true}}},
		{"power, not headcount", []Vote{{Power: 1, Verdicts: pack(t, o)}, {Power: 1, Verdicts: pack(t, o)}, {Power: 5, Verdicts: pack(t, m)}}, 1,
			[]Sample{{0, true}}},
		{"no votes", nil, 3, nil},
		{"zero power", []Vote{{Power: 0, Verdicts: pack(t, m)}}, 1, nil},
	}
	for _, c := range cases {
		got, err := Aggregate(c.votes, c.n)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if len(got) != len(c.want) {
			t.Fatalf("%s: %v, want %v", c.name, got, c.want)
		}
		for i := range got {
			if got[i] != c.want[i] {
				t.Fatalf("%s: %v, want %v", c.name, got, c.want)
			}
		}
	}
}

func TestAggregateRejectsBadInput(t *testing.T) {
	cases := map[string]struct {
		votes []Vote
		n     int
	}{
		"negative power":            {[]Vote{{Power: -1, Abstain: true}}, 1},
		"power overflow":            {[]Vote{{Power: math.MaxInt64, Abstain: true}, {Power: math.MaxInt64, Abstain: true}, {Power: math.MaxInt64, Abstain: true}}, 1},
		"longer than the packing":   {[]Vote{{Power: 1, Verdicts: pack(t, o, o, o, o, o, o, o, o, o)}}, 5},
		"sparse index out of range": {[]Vote{{Power: 1, Verdicts: []byte{0x10}}}, 5},
		"invalid verdict":           {[]Vote{{Power: 1, Verdicts: []byte{0x03}}}, 1},
		"negative n":                {nil, -1},
		"padding bits set":          {[]Vote{{Power: 1, Verdicts: []byte{0xc1}}}, 1},
	}
	for name, c := range cases {
		if _, err := Aggregate(c.votes, c.n); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// TestPropertyByzantineMinorityCannotDecide draws random validator sets with
// Byzantine power below a third of the total and commits holding at least
// two thirds, and checks: no sample that no honest validator in the commit
// voted for; every verdict all honest validators in the commit share is
// produced.
func TestPropertyByzantineMinorityCannotDecide(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 9))
	for run := range 3000 {
		nVals := 4 + rng.IntN(147)
		n := 1 + rng.IntN(40)
		powers := make([]int64, nVals)
		var total int64
		for i := range powers {
			powers[i] = 1 + rng.Int64N(1000)
			total += powers[i]
		}
		byz := make([]bool, nVals)
		var byzPower int64
		for _, i := range rng.Perm(nVals) {
			if 3*(byzPower+powers[i]) < total && rng.IntN(2) == 0 {
				byz[i] = true
				byzPower += powers[i]
			}
		}
		// The commit: validators in random order until it holds 2/3.
		var commit []int
		var commitPower int64
		for _, i := range rng.Perm(nVals) {
			if 3*commitPower >= 2*total && rng.IntN(3) == 0 {
				break
			}
			commit = append(commit, i)
			commitPower += powers[i]
		}
		truth := make([]verdict.Verdict, n)
		unanimous := make([]bool, n)
		for e := range truth {
			truth[e] = verdict.Verdict(1 + rng.IntN(2))
			unanimous[e] = rng.IntN(2) == 0
		}
		var votes []Vote
		honestVoted := make([][3]bool, n)
		for _, i := range commit {
			vs := make([]verdict.Verdict, n)
			for e := range vs {
				switch {
				case byz[i]:
					vs[e] = verdict.Verdict(rng.IntN(3))
				case unanimous[e]:
					vs[e] = truth[e]
				default:
					vs[e] = verdict.Verdict(rng.IntN(3))
				}
				if !byz[i] {
					honestVoted[e][vs[e]] = true
				}
			}
			// Byzantine validators may abstain.
			abstain := byz[i] && rng.IntN(5) == 0
			votes = append(votes, Vote{Power: powers[i], Verdicts: compact(t, vs...), Abstain: abstain})
		}
		samples, err := Aggregate(votes, n)
		if err != nil {
			t.Fatal(err)
		}
		produced := make([]int, n) // 0 none, 1 ok, 2 miss
		for _, s := range samples {
			v := verdict.OK
			if s.Miss {
				v = verdict.Miss
			}
			if !honestVoted[s.Index][v] {
				t.Fatalf("run %d: executor %d got %s that no honest validator voted for", run, s.Index, v)
			}
			produced[s.Index] = int(v)
		}
		for e := range truth {
			if unanimous[e] && produced[e] != int(truth[e]) {
				t.Fatalf("run %d: executor %d: honest validators all said %s, produced %d", run, e, truth[e], produced[e])
			}
		}
	}
}

// FuzzAggregate: never panics, and on valid input gives exactly the
// samples of a naive per-executor count: every sample has a strict
// majority of C, and every strict majority gives a sample (the sparse
// credit and debit, and the word and byte shortcuts, lose nothing). The
// three votes are cuts of raw of any length, so both compact forms and
// invalid ones are explored.
func FuzzAggregate(f *testing.F) {
	f.Add([]byte{0x09, 0x02, 0x06}, int64(3), int64(5), int64(1), 3, uint16(1), uint16(2), uint8(0))
	f.Add(bytesOf(0x55, 120), int64(2), int64(2), int64(1), 160, uint16(40), uint16(80), uint8(0))                               // three lists of 160 oks
	f.Add(append(bytesOf(0x55, 100), bytesOf(0x5a, 20)...), int64(1), int64(1), int64(3), 160, uint16(40), uint16(80), uint8(2)) // words and mixed bytes
	f.Add([]byte{0x01, 0x04, 0x00, 0x03}, int64(1), int64(1), int64(1), 100, uint16(0), uint16(2), uint8(4))                     // sparse, with an all-ok list
	f.Fuzz(func(t *testing.T, raw []byte, p1, p2, p3 int64, n int, cut1, cut2 uint16, abstain uint8) {
		if n < 0 || n > 200 {
			return
		}
		a, b := min(int(cut1), len(raw)), min(int(cut2), len(raw))
		if a > b {
			a, b = b, a
		}
		parts := [][]byte{raw[:a], raw[a:b], raw[b:]}
		var votes []Vote
		for i, p := range []int64{p1, p2, p3} {
			votes = append(votes, Vote{Power: p, Verdicts: parts[i], Abstain: abstain>>i&1 != 0})
		}
		samples, err := Aggregate(votes, n)
		if err != nil {
			return
		}
		if !slices.Equal(samples, naiveAggregate(t, votes, n)) {
			t.Fatalf("n=%d: samples %v, naive count %v", n, samples, naiveAggregate(t, votes, n))
		}
	})
}

// naiveAggregate is the reference count (referenceAggregate, the old
// per-executor tally) over the same votes with every list packed and
// abstentions as the reference spelled them (no list).
func naiveAggregate(t testing.TB, votes []Vote, n int) []Sample {
	ref := make([]Vote, len(votes))
	for i, v := range votes {
		ref[i] = Vote{Power: v.Power}
		switch {
		case v.Abstain:
		case n == 0:
			ref[i].Verdicts = []byte{0} // the reference needs a non-empty list; no executor reads it
		default:
			ref[i].Verdicts = pack(t, listOf(t, v.Verdicts, n)...)
		}
	}
	return referenceAggregate(ref, n)
}

// listOf reads a valid compact list of either form into verdicts.
func listOf(t testing.TB, bz []byte, n int) []verdict.Verdict {
	t.Helper()
	if !verdict.IsSparse(bz, n) {
		vs, err := verdict.Unpack(bz, n)
		if err != nil {
			t.Fatal(err)
		}
		return vs
	}
	vs := make([]verdict.Verdict, n)
	for i := range vs {
		vs[i] = verdict.OK
	}
	if err := verdict.Exceptions(bz, n, func(i int, v verdict.Verdict) { vs[i] = v }); err != nil {
		t.Fatal(err)
	}
	return vs
}

func bytesOf(b byte, n int) []byte { return bytes.Repeat([]byte{b}, n) }
