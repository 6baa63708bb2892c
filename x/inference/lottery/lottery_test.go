package lottery

import (
	"errors"
	"math"
	"testing"
)

func TestDrawIsReproducible(t *testing.T) {
	weights := []uint64{5, 1, 0, 9, 3}
	for seed := uint64(0); seed < 200; seed++ {
		a, err := Draw(weights, seed)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := Draw(append([]uint64(nil), weights...), seed)
		if a != b {
			t.Fatalf("seed %d drew %d then %d", seed, a, b)
		}
		if weights[a] == 0 {
			t.Fatalf("seed %d drew zero-weight index %d", seed, a)
		}
	}
}

func TestDrawIsProportionalToWeight(t *testing.T) {
	weights := []uint64{1, 2, 3, 4, 0, 10}
	total, _ := Total(weights)
	const draws = 200_000
	counts := make([]int, len(weights))
	for seed := uint64(0); seed < draws; seed++ {
		i, err := Draw(weights, seed)
		if err != nil {
			t.Fatal(err)
		}
		counts[i]++
	}
	for i, w := range weights {
		expected := float64(draws) * float64(w) / float64(total)
		// Five standard deviations of a binomial count.
		p := float64(w) / float64(total)
		tolerance := 5 * math.Sqrt(float64(draws)*p*(1-p))
		if math.Abs(float64(counts[i])-expected) > tolerance {
			t.Errorf("index %d (weight %d): %d draws, expected %.0f ± %.0f", i, w, counts[i], expected, tolerance)
		}
	}
	if counts[4] != 0 {
		t.Errorf("zero-weight index drawn %d times", counts[4])
	}
}

func TestDrawDifferentSeedsSpread(t *testing.T) {
	weights := []uint64{1, 1, 1, 1}
	seen := map[int]bool{}
	for seed := uint64(0); seed < 64; seed++ {
		i, _ := Draw(weights, seed)
		seen[i] = true
	}
	if len(seen) != len(weights) {
		t.Errorf("64 seeds reached only %d of %d equal candidates", len(seen), len(weights))
	}
}

func TestDrawErrors(t *testing.T) {
	cases := []struct {
		name    string
		weights []uint64
		want    error
	}{
		{"empty", nil, ErrEmpty},
		{"all zero", []uint64{0, 0, 0}, ErrZeroWeight},
		{"overflow", []uint64{math.MaxUint64, 1}, ErrOverflow},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if _, err := Draw(c.weights, 42); !errors.Is(err, c.want) {
				t.Errorf("Draw error = %v, want %v", err, c.want)
			}
		})
	}
}

func TestDrawHugeTotalStaysInRange(t *testing.T) {
	weights := []uint64{math.MaxUint64 / 2, math.MaxUint64 / 2}
	for seed := uint64(0); seed < 1000; seed++ {
		i, err := Draw(weights, seed)
		if err != nil || i < 0 || i > 1 {
			t.Fatalf("seed %d: index %d err %v", seed, i, err)
		}
	}
}

func TestUniformSingleValue(t *testing.T) {
	for seed := uint64(0); seed < 10; seed++ {
		if got := uniform(seed, 1); got != 0 {
			t.Fatalf("uniform(%d, 1) = %d", seed, got)
		}
	}
}

func FuzzDraw(f *testing.F) {
	f.Add(uint64(1), uint64(2), uint64(3), uint64(7))
	f.Add(uint64(0), uint64(0), uint64(1), uint64(0))
	f.Add(uint64(math.MaxUint64), uint64(0), uint64(0), uint64(99))
	f.Fuzz(func(t *testing.T, a, b, c, seed uint64) {
		weights := []uint64{a, b, c}
		i, err := Draw(weights, seed)
		if err != nil {
			return
		}
		if i < 0 || i >= len(weights) || weights[i] == 0 {
			t.Fatalf("Draw(%v, %d) = %d", weights, seed, i)
		}
	})
}

func BenchmarkDraw1000(b *testing.B) {
	weights := make([]uint64, 1000)
	for i := range weights {
		weights[i] = uint64(100 + i)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := Draw(weights, uint64(i)); err != nil {
			b.Fatal(err)
		}
	}
}

// TestTableDrawsWhatDrawDraws: over random weight lists (zeros, huge values,
// single entries) and many seeds, Table.Draw gives Draw's index and
// NewTable fails exactly where Draw does.
func TestTableDrawsWhatDrawDraws(t *testing.T) {
	lists := [][]uint64{{}, {0}, {0, 0}, {7}, {0, 5, 0}, {math.MaxUint64, 1}, {math.MaxUint64 / 2, math.MaxUint64 / 2, 1}}
	state := uint64(12)
	next := func() uint64 { // xorshift: deterministic, no math/rand
		state ^= state << 13
		state ^= state >> 7
		state ^= state << 17
		return state
	}
	for range 300 {
		w := make([]uint64, 1+next()%40)
		for i := range w {
			switch next() % 4 {
			case 0:
				w[i] = 0
			case 1:
				w[i] = next() >> 20
			default:
				w[i] = next() % 1000
			}
		}
		lists = append(lists, w)
	}
	for _, w := range lists {
		table, tableErr := NewTable(w)
		for seed := uint64(0); seed < 50; seed++ {
			want, err := Draw(w, seed)
			if !errors.Is(tableErr, err) || (err != nil) != (tableErr != nil) {
				t.Fatalf("weights %v: NewTable error %v, Draw error %v", w, tableErr, err)
			}
			if err != nil {
				break
			}
			if got := table.Draw(seed); got != want {
				t.Fatalf("weights %v seed %d: table drew %d, Draw %d", w, seed, got, want)
			}
		}
		if tableErr == nil {
			total, _ := Total(w)
			if table.Total() != total {
				t.Fatalf("weights %v: total %d, want %d", w, table.Total(), total)
			}
		}
	}
}
