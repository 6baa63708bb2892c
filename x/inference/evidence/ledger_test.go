package evidence

import (
	"testing"
)

var two = Params{Window: 16, MinAgents: 2}

// op is one step of a table test: an ok, a miss through agent, or an
// attested miss at height.
type op struct {
	ok       bool
	agent    string
	start    int64
	end      int64
	probe    bool
	attested int64
}

func miss(agent string, start, end int64) op { return op{agent: agent, start: start, end: end} }

func apply(l Ledger, p Params, o op) (Ledger, []Verdict) {
	switch {
	case o.ok:
		return l.OK(p), nil
	case o.attested != 0:
		return l.AttestedMiss(o.attested)
	}
	return l.Miss(Miss{Agent: o.agent, Start: o.start, End: o.end, Probe: o.probe}, p, probeSince)
}

// probeSince is the PROBE period the table tests' probes belong to.
const probeSince = 40

func probeMiss(agent string, start, end int64) op {
	return op{agent: agent, start: start, end: end, probe: true}
}

func TestLedgerCorroboration(t *testing.T) {
	cases := []struct {
		name   string
		p      Params
		ops    []op
		counts []int // verdicts after each op
		held   uint32
	}{
		{"attack: one agent's misses never count", two,
			[]op{miss("g", 1, 11), miss("g", 2, 12), miss("g", 3, 13), miss("g", 4, 14)},
			[]int{0, 0, 0, 0}, 4},
		{"a second agent's miss backs the first, one for one", two,
			[]op{miss("a", 1, 11), miss("b", 2, 12)},
			[]int{0, 2}, 0},
		{"attack: a griefer beside one honest miss counts once, not every time", two,
			[]op{miss("g", 1, 11), miss("g", 2, 12), miss("g", 3, 13), miss("h", 4, 14), miss("g", 5, 15)},
			[]int{0, 0, 0, 2, 0}, 3},
		{"attack: an honest miss backs one griefer miss even after the griefer's ages out", Params{Window: 4, MinAgents: 2},
			[]op{miss("g", 1, 11), miss("h", 2, 12), {ok: true}, {ok: true}, miss("g", 5, 15)},
			[]int{0, 2, 0, 0, 0}, 1},
		{"two agents alternating count in pairs", two,
			[]op{miss("a", 1, 11), miss("b", 2, 12), miss("a", 3, 13), miss("b", 4, 14), miss("a", 5, 15)},
			[]int{0, 2, 0, 2, 0}, 1},
		{"attack: a griefer's burst after honest misses ended does not pair with them", two,
			[]op{miss("h", 1, 3), miss("h", 5, 7), miss("g", 9, 11), miss("g", 9, 11)},
			[]int{0, 0, 0, 0}, 4},
		{"misses whose lifetimes only touch overlap", two,
			[]op{miss("a", 1, 3), miss("b", 3, 5)},
			[]int{0, 2}, 0},
		{"three agents: each pair must overlap", Params{Window: 16, MinAgents: 3},
			[]op{miss("a", 1, 3), miss("b", 5, 7), miss("c", 3, 5)},
			[]int{0, 0, 0}, 3},
		{"two agents' probes of one PROBE period pair without overlapping", two,
			[]op{probeMiss("a", 40, 43), probeMiss("b", 50, 53)},
			[]int{0, 2}, 0},
		{"attack: a probe miss never pairs with a miss from before the PROBE period", two,
			[]op{miss("h", 30, 45), probeMiss("g", 41, 44), probeMiss("g2", 20, 39)},
			[]int{0, 0, 0}, 3},
		{"min agents 1 trusts a single agent", Params{Window: 16, MinAgents: 1},
			[]op{miss("g", 1, 11), miss("g", 2, 12)},
			[]int{1, 1}, 0},
		{"three agents needed: two are not enough", Params{Window: 16, MinAgents: 3},
			[]op{miss("a", 1, 11), miss("b", 2, 12), miss("c", 3, 13)},
			[]int{0, 0, 3}, 0},
		{"a miss that aged out of the window backs nothing", Params{Window: 3, MinAgents: 2},
			[]op{miss("a", 1, 11), {ok: true}, {ok: true}, {ok: true}, miss("b", 5, 15)},
			[]int{0, 0, 0, 0, 0}, 1},
		{"inside the window it still backs", Params{Window: 3, MinAgents: 2},
			[]op{miss("a", 1, 11), {ok: true}, miss("b", 5, 15)},
			[]int{0, 0, 2}, 0},
		{"an attested miss in the lifetime counts a held miss", two,
			[]op{miss("g", 1, 11), {attested: 12}},
			[]int{0, 1}, 0},
		{"an attested miss after the lifetime and its lag does not", two,
			[]op{miss("g", 1, 11), {attested: 11 + AttestationLag + 1}},
			[]int{0, 0}, 1},
		{"an attested miss during a later-expiring inference counts it at once", two,
			[]op{{attested: 5}, miss("g", 3, 13)},
			[]int{0, 1}, 0},
		{"an attested miss before the inference started does not", two,
			[]op{{attested: 5}, miss("g", 6, 16)},
			[]int{0, 0}, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var l Ledger
			for i, o := range tc.ops {
				var v []Verdict
				l, v = apply(l, tc.p, o)
				if len(v) != tc.counts[i] {
					t.Fatalf("op %d (%+v): %d verdicts %+v, want %d", i, o, len(v), v, tc.counts[i])
				}
			}
			if got := l.Held(); got != tc.held {
				t.Fatalf("held %d, want %d (ledger %+v)", got, tc.held, l)
			}
		})
	}
}

func TestVerdictSaysWhetherTheMissWasHeld(t *testing.T) {
	l, _ := Ledger{}.Miss(Miss{Agent: "a", Start: 1, End: 11}, two, 0)
	_, v := l.Miss(Miss{Agent: "b", Start: 2, End: 12}, two, 0)
	if len(v) != 2 || !v[0].WasHeld || v[1].WasHeld || v[0].Miss.Agent != "a" || v[0].ByAttestation {
		t.Fatalf("verdicts %+v", v)
	}
}

func TestProbeHeldFrom(t *testing.T) {
	l, _ := Ledger{}.Miss(Miss{Agent: "g", Start: 40, End: 50, Probe: true}, two, 40)
	switch {
	case !l.ProbeHeldFrom("g", 40):
		t.Fatal("the agent whose probe expired may take the slot again")
	case l.ProbeHeldFrom("h", 40):
		t.Fatal("another agent is refused the probe")
	case l.ProbeHeldFrom("g", 41):
		t.Fatal("a probe from before the current PROBE period still refuses")
	}
}

func TestLedgerOperationsDoNotAlias(t *testing.T) {
	a, _ := Ledger{}.Miss(Miss{Agent: "a", Start: 1, End: 2}, two, 0)
	b, _ := a.Miss(Miss{Agent: "b", Start: 1, End: 2}, two, 0)
	if a.Misses[0].Counted || !b.Misses[0].Counted {
		t.Fatalf("a %+v b %+v", a, b)
	}
	if a.Equal(b) || !b.Equal(b.clone()) || b.Equal(b.OK(two)) {
		t.Fatal("Equal")
	}
}
