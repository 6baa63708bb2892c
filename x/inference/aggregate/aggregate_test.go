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
		{"unanimous", []Vote{{10, pack(t, m, o)}, {10, pack(t, m, o)}, {10, pack(t, m, o)}}, 2,
			[]Sample{{0, true}, {1, false}}},
		{"exactly half is not a majority", []Vote{{10, pack(t, m)}, {10, pack(t, o)}}, 1, nil},
		{"an abstainer counts in C", []Vote{{10, pack(t, m)}, {10, pack(t, m)}, {25, nil}}, 1, nil},
		{"unknown counts in C", []Vote{{10, pack(t, m)}, {10, pack(t, u)}, {1, pack(t, m)}}, 1,
			[]Sample{{0, true}}},
		{"power, not headcount", []Vote{{1, pack(t, o)}, {1, pack(t, o)}, {5, pack(t, m)}}, 1,
			[]Sample{{0, true}}},
		{"no votes", nil, 3, nil},
		{"zero power", []Vote{{0, pack(t, m)}}, 1, nil},
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
		"negative power":   {[]Vote{{-1, nil}}, 1},
		"power overflow":   {[]Vote{{math.MaxInt64, nil}, {math.MaxInt64, nil}, {math.MaxInt64, nil}}, 1},
		"wrong length":     {[]Vote{{1, pack(t, o, o)}}, 5},
		"invalid verdict":  {[]Vote{{1, []byte{0x03}}}, 1},
		"negative n":       {nil, -1},
		"padding bits set": {[]Vote{{1, []byte{0xc1}}}, 1},
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
			var bz []byte
			if !(byz[i] && rng.IntN(5) == 0) { // Byzantine validators may abstain
				bz = pack(t, vs...)
			}
			votes = append(votes, Vote{Power: powers[i], Verdicts: bz})
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
// majority of C, and every strict majority gives a sample (the word and
// byte shortcuts of the tally lose nothing).
func FuzzAggregate(f *testing.F) {
	f.Add([]byte{0x09, 0x02, 0x06}, int64(3), int64(5), int64(1), 3)
	f.Add(bytesOf(0x55, 120), int64(2), int64(2), int64(1), 160)                               // three lists of 160 oks
	f.Add(append(bytesOf(0x55, 100), bytesOf(0x5a, 20)...), int64(1), int64(1), int64(3), 160) // words and mixed bytes
	f.Fuzz(func(t *testing.T, raw []byte, p1, p2, p3 int64, n int) {
		if n < 0 || n > 200 {
			return
		}
		size := verdict.PackedLen(n)
		var votes []Vote
		for i, p := range []int64{p1, p2, p3} {
			var bz []byte
			if lo := i * size; lo+size <= len(raw) {
				bz = raw[lo : lo+size]
			}
			votes = append(votes, Vote{Power: p, Verdicts: bz})
		}
		samples, err := Aggregate(votes, n)
		if err != nil {
			return
		}
		var total uint64
		for _, v := range votes {
			total += uint64(v.Power)
		}
		var want []Sample
		for i := 0; i < n; i++ {
			var ok, miss uint64
			for _, v := range votes {
				if len(v.Verdicts) == 0 {
					continue
				}
				switch verdict.At(v.Verdicts, i) {
				case verdict.OK:
					ok += uint64(v.Power)
				case verdict.Miss:
					miss += uint64(v.Power)
				}
			}
			switch {
			case 2*miss > total:
				want = append(want, Sample{Index: i, Miss: true})
			case 2*ok > total:
				want = append(want, Sample{Index: i})
			}
		}
		if !slices.Equal(samples, want) {
			t.Fatalf("n=%d: samples %v, naive count %v", n, samples, want)
		}
	})
}

func bytesOf(b byte, n int) []byte { return bytes.Repeat([]byte{b}, n) }
