package service

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// referenceMedian is the median by definition, per executor: sort the
// known reports by rate and walk the power.
func referenceMedian(lists [][]Report, powers []uint64, total uint64, n int) []Report {
	out := make([]Report, n)
	for i := range out {
		type rep struct {
			r Report
			p uint64
		}
		var reps []rep
		var known uint64
		for v, l := range lists {
			if l != nil && l[i].Known() {
				reps = append(reps, rep{l[i], powers[v]})
				known += powers[v]
			}
		}
		out[i] = Unknown
		if known == 0 || 3*known <= 2*total {
			continue
		}
		slices.SortStableFunc(reps, func(a, b rep) int { return int(a.r) - int(b.r) })
		var cum uint64
		for _, x := range reps {
			if cum += x.p; 2*cum >= known {
				out[i] = x.r
				break
			}
		}
	}
	return out
}

func encodeAll(t *testing.T, lists [][]Report, powers []uint64) []Vote {
	t.Helper()
	votes := make([]Vote, len(lists))
	for v, l := range lists {
		bz, err := Encode(l)
		if err != nil {
			t.Fatal(err)
		}
		votes[v] = Vote{Power: int64(powers[v]), Reports: bz}
	}
	return votes
}

func TestMedianTable(t *testing.T) {
	u := Unknown
	for _, tc := range []struct {
		name   string
		lists  [][]Report
		powers []uint64
		total  uint64
		want   []Report
	}{
		{"four equal validators: the lower median", [][]Report{{0}, {10}, {30}, {40}}, []uint64{1, 1, 1, 1}, 4, []Report{10}},
		{"odd count: the middle", [][]Report{{5}, {50}, {20}}, []uint64{1, 1, 1}, 3, []Report{20}},
		{"power decides, not count", [][]Report{{0}, {0}, {60}}, []uint64{1, 1, 5}, 7, []Report{60}},
		{"exactly 2/3 reporting: no sample", [][]Report{{30}, {30}, {u}}, []uint64{1, 1, 1}, 3, []Report{u}},
		{"absent validators count in the total", [][]Report{{30}, {30}, {30}}, []uint64{1, 1, 1}, 5, []Report{u}},
		{"an abstaining validator still counts in the total", [][]Report{{40}, {40}, {40}, nil}, []uint64{1, 1, 1, 1}, 4, []Report{40}},
		{"per executor", [][]Report{{0, 100, u}, {0, 100, 3}, {0, 90, 3}}, []uint64{1, 1, 1}, 3, []Report{0, 100, u}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Median(encodeAll(t, tc.lists, tc.powers), tc.total, len(tc.want))
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, tc.want) {
				t.Fatalf("Median = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestMedianRefusesBadInput(t *testing.T) {
	for _, tc := range []struct {
		name  string
		votes []Vote
		total uint64
		n     int
	}{
		{"negative power", []Vote{{Power: -1}}, 1, 1},
		{"votes over the commit's power", []Vote{{Power: 3}}, 2, 1},
		{"a list of another group size", []Vote{{Power: 1, Reports: []byte{0, 2, 5}}}, 1, 1},
		{"negative group", nil, 1, -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := Median(tc.votes, tc.total, tc.n); err == nil {
				t.Fatal("accepted")
			}
		})
	}
}

// TestPropertyMedianEqualsTheReference: the tally over encoded lists gives
// the median by definition on random commits.
func TestPropertyMedianEqualsTheReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(24, 2))
	for trial := 0; trial < 2000; trial++ {
		n, vals := 1+rng.IntN(40), 1+rng.IntN(12)
		lists := make([][]Report, vals)
		powers := make([]uint64, vals)
		var sum uint64
		for v := range lists {
			powers[v] = 1 + rng.Uint64N(100)
			sum += powers[v]
			if rng.IntN(8) > 0 {
				lists[v] = randomReports(rng, n)
			}
		}
		total := sum + rng.Uint64N(sum/2+1)
		got, err := Median(encodeAll(t, lists, powers), total, n)
		if err != nil {
			t.Fatalf("trial %d: %v", trial, err)
		}
		if want := referenceMedian(lists, powers, total, n); !slices.Equal(got, want) {
			t.Fatalf("trial %d: Median %v, reference %v", trial, got, want)
		}
	}
}

// TestPropertyByzantineMinorityStaysWithinTheHonestRange is S3: validators
// with less than 1/3 of the commit's power, whatever they report (the
// maximum rate, 0%, unknown, a lie aimed at one executor), never move an
// executor's attested rate outside the range the honest validators that
// reported it span; and when honest validators alone hold more than 2/3
// of the power and all report, a rate is always attested.
// randomValidatorSet is 4 to 33 validators of random power and a random
// Byzantine set among them holding less than a third of the total.
func randomValidatorSet(rng *rand.Rand) (powers []uint64, total uint64, byz []bool) {
	vals := 4 + rng.IntN(30)
	powers = make([]uint64, vals)
	for v := range powers {
		powers[v] = 1 + rng.Uint64N(1000)
		total += powers[v]
	}
	byz = make([]bool, vals)
	var byzPower uint64
	for _, v := range rng.Perm(vals) {
		if 3*(byzPower+powers[v]) < total && rng.IntN(2) == 0 {
			byz[v], byzPower = true, byzPower+powers[v]
		}
	}
	return powers, total, byz
}

func TestPropertyByzantineMinorityStaysWithinTheHonestRange(t *testing.T) {
	rng := rand.New(rand.NewPCG(24, 3))
	for trial := 0; trial < 3000; trial++ {
		n := 1 + rng.IntN(20)
		powers, total, byz := randomValidatorSet(rng)
		vals := len(powers)
		lists := make([][]Report, vals)
		allHonestReport := rng.IntN(2) == 0
		mode := rng.IntN(5)
		for v := range lists {
			l := make([]Report, n)
			for i := range l {
				switch {
				case !byz[v]:
					l[i] = Report(rng.IntN(40))
					if !allHonestReport && rng.IntN(10) == 0 {
						l[i] = Unknown
					}
				case mode == 0:
					l[i] = MaxRate
				case mode == 1:
					l[i] = 0
				case mode == 2:
					l[i] = Unknown
				case mode == 3 && i == 0:
					l[i] = MaxRate // targeted at executor 0
				default:
					l[i] = Report(rng.IntN(int(MaxRate) + 1))
				}
			}
			lists[v] = l
		}
		got, err := Median(encodeAll(t, lists, powers), total, n)
		if err != nil {
			t.Fatalf("trial %d: %v", trial, err)
		}
		for i, m := range got {
			lo, hi, any := MaxRate, Report(0), false
			for v, l := range lists {
				if !byz[v] && l[i].Known() {
					lo, hi, any = min(lo, l[i]), max(hi, l[i]), true
				}
			}
			if m == Unknown {
				if allHonestReport {
					t.Fatalf("trial %d: executor %d has no rate although every honest validator reported", trial, i)
				}
				continue
			}
			if !any || m < lo || m > hi {
				t.Fatalf("trial %d: executor %d attested %s outside the honest range [%s, %s] (any=%v)", trial, i, m, lo, hi, any)
			}
		}
	}
}

// FuzzMedian: on arbitrary report lists cut from the fuzzer's bytes, the
// tally equals the median by definition, and bad input is an error, never
// a panic.
func FuzzMedian(f *testing.F) {
	f.Add([]byte{0, 10, 30, 40}, uint8(4), uint8(1))
	f.Add([]byte{255, 0, 100, 7, 255, 3}, uint8(3), uint8(2))
	f.Fuzz(func(t *testing.T, raw []byte, vals, n8 uint8) {
		n := 1 + int(n8%16)
		v := 1 + int(vals%12)
		lists := make([][]Report, v)
		powers := make([]uint64, v)
		var total uint64
		for i := range lists {
			powers[i] = 1 + uint64(i%5)
			total += powers[i]
			l := make([]Report, n)
			for e := range l {
				k := i*n + e
				if k < len(raw) {
					l[e] = Report(raw[k])
					if l[e] != Unknown && !l[e].Known() {
						l[e] = Report(raw[k] % (byte(MaxRate) + 1))
					}
				}
			}
			lists[i] = Clamp(l)
		}
		got, err := Median(encodeAll(t, lists, powers), total, n)
		if err != nil {
			t.Fatal(err)
		}
		if want := referenceMedian(lists, powers, total, n); !slices.Equal(got, want) {
			t.Fatalf("Median %v, reference %v", got, want)
		}
	})
}
