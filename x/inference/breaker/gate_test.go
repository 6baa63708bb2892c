package breaker

import "testing"

// The gate layout, one row per kind of record.
func TestGateOfEachRecord(t *testing.T) {
	excluded := Record{State: Excluded, ExcludedAt: 10, Cooldown: 5}
	cases := []struct {
		name          string
		rec           Record
		gated, isExcl bool
		offersAt      map[int64]bool
	}{
		{"healthy has no gate", Record{}, false, false, nil},
		{"excluded is out until its eligible height", excluded, true, true, map[int64]bool{14: false, 15: true, 16: true}},
		{"probe with a free slot is offered", Record{State: Probe}, true, false, map[int64]bool{1: true}},
		{"probe with its slot taken is out", Record{State: Probe, ProbeInFlight: true}, true, false, map[int64]bool{1: false}},
	}
	for _, c := range cases {
		g, gated := GateOf(c.rec)
		if gated != c.gated {
			t.Fatalf("%s: gated %v", c.name, gated)
		}
		if !gated {
			continue
		}
		if g.Excluded() != c.isExcl {
			t.Fatalf("%s: excluded %v", c.name, g.Excluded())
		}
		for h, want := range c.offersAt {
			if g.OffersProbe(h) != want {
				t.Fatalf("%s at %d: offers %v", c.name, h, !want)
			}
		}
	}
}

// The start rule: one block of grace after an exclusion, then refused until
// PROBE; a PROBE refuses a second probe while its slot is taken.
func TestRefusesStart(t *testing.T) {
	for _, c := range []struct {
		name   string
		rec    Record
		height int64
		want   bool
	}{
		{"healthy", Record{}, 9, false},
		{"excluded in this block: a draw from the previous block", Record{State: Excluded, ExcludedAt: 9}, 9, false},
		{"excluded in the previous block: still grace", Record{State: Excluded, ExcludedAt: 8}, 9, false},
		{"excluded before the previous block", Record{State: Excluded, ExcludedAt: 7}, 9, true},
		{"probe slot free", Record{State: Probe}, 9, false},
		{"probe slot taken", Record{State: Probe, ProbeInFlight: true}, 9, true},
	} {
		if got := RefusesStart(c.rec, c.height); got != c.want {
			t.Errorf("%s: refused %v, want %v", c.name, got, c.want)
		}
	}
}
