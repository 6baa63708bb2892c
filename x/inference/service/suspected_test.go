package service

import (
	"math/rand/v2"
	"slices"
	"testing"
)

func TestSuspectedTable(t *testing.T) {
	cases := []struct {
		name   string
		lists  [][]Report // nil: no list
		powers []uint64
		total  uint64
		want   []bool
	}{
		{"nobody rates", [][]Report{{0, 0}, {0, 0}, {0, 0}}, []uint64{1, 1, 1}, 3, []bool{false, false}},
		{"one of three is exactly 1/3: not more", [][]Report{{20, 0}, {0, 0}, {0, 0}}, []uint64{1, 1, 1}, 3, []bool{false, false}},
		{"two of four", [][]Report{{20, 0}, {30, 0}, {0, 0}, {0, 0}}, []uint64{1, 1, 1, 1}, 4, []bool{true, false}},
		{"unknown is not a rate", [][]Report{{Unknown, 0}, {Unknown, 0}, {0, 0}}, []uint64{1, 1, 1}, 3, []bool{false, false}},
		{"absent power counts in the total", [][]Report{{20, 40}, {20, 0}}, []uint64{1, 1}, 6, []bool{false, false}},
		{"power, not heads", [][]Report{{0, 5}, {0, 0}, {0, 0}}, []uint64{5, 2, 2}, 9, []bool{false, true}},
		{"a vote without a list", [][]Report{nil, {20}, {20}}, []uint64{5, 1, 1}, 7, []bool{false}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			votes := encodeAll(t, c.lists, c.powers)
			for v, l := range c.lists {
				if l == nil {
					votes[v].Reports = nil
				}
			}
			got, err := Suspected(votes, c.total, len(c.want), -1)
			if err != nil {
				t.Fatal(err)
			}
			for i := range c.want {
				if got[i] != c.want[i] {
					t.Fatalf("executor %d: %v, want %v (all %v)", i, got[i], c.want[i], got)
				}
			}
		})
	}
	for _, maxRated := range []int{-1, 1} {
		if _, err := Suspected([]Vote{{Power: 3, Reports: []byte{0xff}}}, 3, 1, maxRated); err == nil {
			t.Fatal("garbage reports: no error")
		}
		if _, err := Suspected([]Vote{{Power: 4}}, 3, 1, maxRated); err == nil {
			t.Fatal("votes above the commit's power: no error")
		}
	}
}

// Attack: a Byzantine third rates every executor at the maximum, so that
// one flaky honest report above 0% flags any executor. With a limit on
// how many executors a vote may rate, such a vote counts for none, while
// honest votes rating a few still flag.
func TestSuspectedIgnoresVotesThatRateTooMany(t *testing.T) {
	lie := []Report{MaxRate, MaxRate, MaxRate, MaxRate}
	lists := [][]Report{lie, lie, lie, {20, 0, 0, 0}, {0, 0, 0, 0}, {0, 30, 0, 0}, {0, 30, 0, 0}, {0, 0, 0, 0}, {0, 0, 0, 0}, {0, 0, 0, 0}}
	powers := []uint64{1, 1, 1, 1, 1, 1, 1, 1, 1, 1}
	votes := encodeAll(t, lists, powers)
	unlimited, err := Suspected(votes, 10, 4, -1)
	if err != nil {
		t.Fatal(err)
	}
	if want := []bool{true, true, false, false}; !slices.Equal(unlimited, want) {
		t.Fatalf("no limit: %v, want %v (the lie plus one report flags; the lie alone does not)", unlimited, want)
	}
	limited, err := Suspected(votes, 10, 4, 2)
	if err != nil {
		t.Fatal(err)
	}
	if want := []bool{false, false, false, false}; !slices.Equal(limited, want) {
		t.Fatalf("limit 2: %v, want %v (the lie counts for nothing; two honest of ten are not above 1/3)", limited, want)
	}
}

// Attack: validators below 1/3 of the power rate every executor (or one)
// to make every validator canary it at the burst rate. Alone they flag
// nothing: a flag always has an honest validator rating the executor
// above 0% behind it; and honest validators holding more than 1/3 that
// rate it always flag it, whatever the others say.
func TestPropertyByzantineMinorityCannotFlagAlone(t *testing.T) {
	rng := rand.New(rand.NewPCG(24, 5))
	for trial := 0; trial < 3000; trial++ {
		n := 1 + rng.IntN(20)
		powers, total, byz := randomValidatorSet(rng)
		vals := len(powers)
		honestRate := rng.IntN(4) // how often an honest validator rates above 0%, in quarters
		lists := make([][]Report, vals)
		for v := range lists {
			l := make([]Report, n)
			for i := range l {
				switch {
				case !byz[v] && rng.IntN(4) < honestRate:
					l[i] = Report(1 + rng.IntN(int(MaxRate)))
				case !byz[v]:
					l[i] = Report(0)
					if rng.IntN(10) == 0 {
						l[i] = Unknown
					}
				default:
					l[i] = MaxRate
				}
			}
			lists[v] = l
		}
		got, err := Suspected(encodeAll(t, lists, powers), total, n, -1)
		if err != nil {
			t.Fatalf("trial %d: %v", trial, err)
		}
		for i, flagged := range got {
			var honest uint64
			for v, l := range lists {
				if !byz[v] && l[i].Known() && l[i] > 0 {
					honest += powers[v]
				}
			}
			if flagged && honest == 0 {
				t.Fatalf("trial %d: executor %d flagged by the Byzantine minority alone", trial, i)
			}
			if 3*honest > total && !flagged {
				t.Fatalf("trial %d: executor %d not flagged although honest validators with %d of %d rate it", trial, i, honest, total)
			}
		}
	}
}
