package sprt

import (
	"testing"

	"cosmossdk.io/math"
)

func dec(s string) math.LegacyDec { return math.LegacyMustNewDecFromStr(s) }

func defaults(t *testing.T) Test {
	t.Helper()
	test, err := New(dec("0.1"), dec("0.2"), dec("4"))
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return test
}

func TestLnKnownValues(t *testing.T) {
	cases := []struct {
		x, want string
	}{
		{"1", "0"},
		{"2", "0.693147180559945309"},
		{"0.5", "-0.693147180559945309"},
		{"10", "2.302585092994045684"},
		{"0.888888888888888889", "-0.117783035656383455"},
	}
	tolerance := dec("0.000000000000001")
	for _, c := range cases {
		got, err := Ln(dec(c.x))
		if err != nil {
			t.Fatalf("Ln(%s): %v", c.x, err)
		}
		if diff := got.Sub(dec(c.want)).Abs(); diff.GT(tolerance) {
			t.Errorf("Ln(%s) = %s, want %s (diff %s)", c.x, got, c.want, diff)
		}
	}
}

func TestLnRejectsNonPositive(t *testing.T) {
	for _, x := range []math.LegacyDec{math.LegacyZeroDec(), dec("-1"), {}} {
		if _, err := Ln(x); err == nil {
			t.Errorf("Ln(%v) returned no error", x)
		}
	}
}

// The reference figure from gonka: six consecutive misses from a fresh epoch
// make a participant INACTIVE with the default parameters; five do not.
func TestDefaultsReferenceFigure(t *testing.T) {
	test := defaults(t)
	cases := []struct {
		name              string
		misses, successes uint64
		down              bool
	}{
		{"fresh epoch, nothing observed", 0, 0, false},
		{"five misses in a row", 5, 0, false},
		{"six misses in a row", 6, 0, true},
		{"six misses after ten successes", 6, 10, false},
		{"seven misses after two successes", 7, 2, true},
		{"honest node, 3% of 5000 missed", 150, 4850, false},
		{"dark node, 30 misses of 100", 30, 70, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := test.IsDown(c.misses, c.successes); got != c.down {
				t.Errorf("IsDown(%d, %d) = %v (LLR %s), want %v",
					c.misses, c.successes, got, test.LLR(c.misses, c.successes), c.down)
			}
		})
	}
}

func TestLLRIsDeterministicAndMonotone(t *testing.T) {
	a, b := defaults(t), defaults(t)
	for m := uint64(0); m < 20; m++ {
		if !a.LLR(m, 3).Equal(b.LLR(m, 3)) {
			t.Fatalf("two identical tests disagree at %d misses", m)
		}
		if a.LLR(m+1, 3).LTE(a.LLR(m, 3)) {
			t.Fatalf("LLR not increasing in misses at %d", m)
		}
		if a.LLR(m, 4).GTE(a.LLR(m, 3)) {
			t.Fatalf("LLR not decreasing in successes at %d", m)
		}
	}
}

func TestLLRExtremeCountsDoNotPanic(t *testing.T) {
	test := defaults(t)
	const max = ^uint64(0)
	if !test.IsDown(max, 0) {
		t.Error("max misses should be down")
	}
	if test.IsDown(0, max) {
		t.Error("max successes should not be down")
	}
	_ = test.LLR(max, max)
}

func TestValidate(t *testing.T) {
	cases := []struct {
		name         string
		good, bad, h math.LegacyDec
		wantErr      bool
	}{
		{"defaults", dec("0.1"), dec("0.2"), dec("4"), false},
		{"good zero", dec("0"), dec("0.2"), dec("4"), true},
		{"good negative", dec("-0.1"), dec("0.2"), dec("4"), true},
		{"bad equals good", dec("0.2"), dec("0.2"), dec("4"), true},
		{"bad below good", dec("0.3"), dec("0.2"), dec("4"), true},
		{"bad one", dec("0.1"), dec("1"), dec("4"), true},
		{"h zero", dec("0.1"), dec("0.2"), dec("0"), true},
		{"unset", math.LegacyDec{}, dec("0.2"), dec("4"), true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := New(c.good, c.bad, c.h)
			if (err != nil) != c.wantErr {
				t.Errorf("New error = %v, wantErr %v", err, c.wantErr)
			}
		})
	}
}
