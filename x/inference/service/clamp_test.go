package service

import (
	"math/rand/v2"
	"slices"
	"testing"
)

func TestRelative(t *testing.T) {
	u := Unknown
	for _, tc := range []struct {
		name  string
		in    []Report
		floor Report
		want  []Report
	}{
		{"the executor that stands out keeps its excess", []Report{0, 6, 0, 31, 0}, 10, []Report{0, 0, 0, 31, 0}},
		{"a rise every executor shows cancels out (S2)", []Report{30, 36, 30, 30, 60}, 10, []Report{0, 0, 0, 0, 30}},
		{"noise under the floor is 0%", []Report{0, 6, 12, 0, 0}, 15, []Report{0, 0, 0, 0, 0}},
		{"unknown stays unknown and does not move the median", []Report{u, u, u, 40, 0, 0}, 10, []Report{u, u, u, 40, 0, 0}},
		{"nothing known", []Report{u, u}, 10, []Report{u, u}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Relative(tc.in, tc.floor); !slices.Equal(got, tc.want) {
				t.Fatalf("Relative = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestClampKeepsTheLargestRates: whatever a monitor saw, the clamped list
// encodes, keeps every report when it fits, and otherwise keeps the
// highest rates and every unknown, or abstains when unknowns alone do
// not fit.
func TestClampKeepsTheLargestRates(t *testing.T) {
	rng := rand.New(rand.NewPCG(24, 4))
	for trial := 0; trial < 500; trial++ {
		n := rng.IntN(3 * MaxExceptions)
		in := randomReports(rng, n)
		out := Clamp(in)
		if _, err := Encode(out); err != nil {
			t.Fatalf("trial %d: clamped list does not encode: %v", trial, err)
		}
		unknowns, exceptions, lowestKept, highestDropped := 0, 0, MaxRate+1, Report(0)
		for i := range in {
			if in[i] == Unknown {
				unknowns++
			}
			if in[i] != 0 {
				exceptions++
			}
		}
		switch {
		case exceptions <= MaxExceptions:
			if !slices.Equal(in, out) {
				t.Fatalf("trial %d: a list that fits was changed", trial)
			}
			continue
		case unknowns > MaxExceptions:
			for i := range out {
				if out[i] != Unknown {
					t.Fatalf("trial %d: too many unknowns, yet executor %d reports %s", trial, i, out[i])
				}
			}
			continue
		}
		for i := range in {
			switch {
			case in[i] == Unknown && out[i] != Unknown, in[i] != Unknown && out[i] != in[i] && out[i] != 0:
				t.Fatalf("trial %d: executor %d: %s became %s", trial, i, in[i], out[i])
			case in[i].Known() && in[i] != 0 && out[i] == in[i]:
				lowestKept = min(lowestKept, in[i])
			case in[i].Known() && in[i] != 0:
				highestDropped = max(highestDropped, in[i])
			}
		}
		if highestDropped > lowestKept {
			t.Fatalf("trial %d: dropped %s but kept %s", trial, highestDropped, lowestKept)
		}
	}
}
