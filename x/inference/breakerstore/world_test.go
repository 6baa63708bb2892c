package breakerstore

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	sdk "github.com/cosmos/cosmos-sdk/types"

	"github.com/inferenced/inferenced/x/inference/service"
	"github.com/inferenced/inferenced/x/inference/testutil/testkit"
	"github.com/inferenced/inferenced/x/inference/types"
	"github.com/inferenced/inferenced/x/inference/verdict"
)

// The script of TestStepMatchesLegacy's histories (equivalence_test.go).

// world is a history's script source: the executors' conditions, the
// inferences in flight and the group, shared by both stores.
type world struct {
	r        *rand.Rand
	params   types.Params
	pool     []envMember // everyone who may join the group
	group    []envMember // the current group, by address
	cond     map[string]condition
	inFlight []*inflight
	seq      int
	epochEnd int64
	// calm histories keep every executor healthy, missing a few traffic
	// outcomes and no attested sample, with no failing agent and long
	// epochs: records come and age out, and are dropped.
	calm bool
}

type condition uint8

const (
	healthy condition = iota
	dark
	degraded
	flaky
	// cheat serves the validators' canaries and its health check but
	// drops clients' requests (a scoped traffic trip).
	cheat
)

type inflight struct {
	id, agent string
	executor  sdk.AccAddress
	start     int64
	expires   int64
}

var worldAgents = []string{"agent-a", "agent-b", "agent-c"}

func newWorld(t *testing.T, seed uint64) *world {
	r := rand.New(rand.NewPCG(seed, 0xb4ea4e4))
	p := testkit.BreakerParams()
	p.HealthCbMaxExcludedWeightPct = []uint64{15, 30, 50, 100}[r.IntN(4)]
	p.HealthCbTrafficMinAgents = uint64(1 + r.IntN(2))
	p.HealthCbInitialCooldownBlocks = uint64(1 + r.IntN(4))
	p.HealthCbMaxCooldownBlocks = p.HealthCbInitialCooldownBlocks << r.IntN(3)
	p.HealthCbWindowSamples, p.HealthCbMinSamples, p.HealthCbConsecutiveMisses = 8, 3, uint64(2+r.IntN(2))
	p.HealthCbTrafficWindowSamples, p.HealthCbTrafficMinSamples = 8, 3
	p.HealthCbTrafficConsecutiveMisses = uint64(2 + r.IntN(2))
	p.HealthCbServiceWindowSamples, p.HealthCbServiceMinSamples, p.HealthCbServiceConsecutiveMisses = 8, 3, 3
	p.EpochLength = []uint64{25, 40, 1000}[r.IntN(3)]
	p.ExpirationBlocks = uint64(1 + r.IntN(3))
	w := &world{r: r, params: p, cond: map[string]condition{}, calm: seed%3 == 0}
	if w.calm {
		p.EpochLength = 1000 // records outlive 64 samples, age out and are dropped
		p.ExpirationBlocks = 1
	}
	require.NoError(t, p.Validate())
	w.params = p
	for i := range 30 {
		models := [][]string{{"m"}, {"n"}, {"m", "n"}}[r.IntN(3)]
		w.pool = append(w.pool, envMember{addr: envAddr(i + 1), weight: uint64(1 + r.IntN(20)), models: models})
	}
	return w
}

// newGroup draws the next epoch's group from the pool.
func (w *world) newGroup() {
	n := 5 + w.r.IntN(pick(w.calm, 4, 20))
	perm := w.r.Perm(len(w.pool))[:n]
	slices.Sort(perm)
	w.group = w.group[:0]
	for _, i := range perm {
		m := w.pool[i]
		if w.r.IntN(4) == 0 {
			m.weight = uint64(1 + w.r.IntN(20))
		}
		w.group = append(w.group, m)
	}
}

// evolve changes some executors' conditions.
func (w *world) evolve() {
	for _, m := range w.pool {
		if !w.calm && w.r.IntN(12) == 0 {
			w.cond[string(m.addr)] = condition(w.r.IntN(5))
		}
	}
}

// attestation is the block's verdicts and service rates from the
// conditions; sometimes none, rarely one that does not fit the group.
func (w *world) attestation(t *testing.T) Attestation {
	n := len(w.group)
	switch w.r.IntN(20) {
	case 0:
		return Attestation{}
	case 1:
		n++ // names a member the group lacks
	}
	vs := make([]verdict.Verdict, n)
	rates := make([]service.Report, n)
	for i := range vs {
		c := healthy
		if i < len(w.group) {
			c = w.cond[string(w.group[i].addr)]
		}
		x := w.r.IntN(100)
		switch c {
		case healthy:
			vs[i] = pick(x < 90, verdict.OK, pick(x < pick(w.calm, 90, 93), verdict.Miss, verdict.Unknown))
			rates[i] = service.Report(w.r.IntN(8))
		case dark:
			vs[i] = pick(x < 85, verdict.Miss, verdict.Unknown)
			rates[i] = service.Unknown
		case degraded:
			vs[i] = pick(x < 95, verdict.OK, verdict.Unknown)
			rates[i] = service.Report(30 + w.r.IntN(60))
		case flaky:
			vs[i] = pick(x < 50, verdict.OK, pick(x < 80, verdict.Miss, verdict.Unknown))
			rates[i] = pick(x%3 == 0, service.Unknown, service.Report(w.r.IntN(40)))
		case cheat:
			vs[i] = verdict.OK
		}
	}
	packed, err := verdict.Pack(vs)
	require.NoError(t, err)
	att := Attestation{Members: n, Samples: packed}
	if w.r.IntN(6) != 0 {
		att.Service, err = service.Encode(service.Clamp(rates))
		require.NoError(t, err)
	}
	if w.r.IntN(15) == 0 {
		att.Samples = nil // service rates alone
	}
	return att
}

func pick[T any](cond bool, a, b T) T {
	if cond {
		return a
	}
	return b
}

// op is one thing a block does after its step, applied to both stores
// alike.
type op struct {
	claim   *inflight // a start: ClaimProbe
	outcome *inflight // an end: QueueOutcome
	miss    bool
}

// blockOps are the block's starts and ends: new inferences on random
// members, the finishes of those in flight (by their executor's
// condition), then the expiries due.
func (w *world) blockOps(h int64) []op {
	var ops []op
	for range w.r.IntN(pick(w.calm, 30, 8)) {
		if len(w.group) == 0 {
			break
		}
		w.seq++
		inf := &inflight{
			id: fmt.Sprintf("inf-%d", w.seq), agent: worldAgents[w.r.IntN(len(worldAgents))],
			executor: w.group[w.r.IntN(len(w.group))].addr, start: h, expires: h + int64(w.params.ExpirationBlocks),
		}
		w.inFlight = append(w.inFlight, inf)
		ops = append(ops, op{claim: inf})
	}
	var left []*inflight
	for _, inf := range w.inFlight {
		finishes := pick(w.calm, 99, 95)
		switch w.cond[string(inf.executor)] {
		case dark:
			finishes = 0
		case degraded:
			finishes = 40
		case flaky:
			finishes = 70
		case cheat:
			finishes = 10
		}
		// An agent that never forwards some requests: misses through it
		// alone.
		if inf.agent == "agent-c" && !w.calm {
			finishes -= 20
		}
		switch {
		case inf.start < h && w.r.IntN(100) < finishes:
			ops = append(ops, op{outcome: inf})
		default:
			left = append(left, inf)
		}
	}
	w.inFlight = w.inFlight[:0]
	for _, inf := range left {
		if inf.expires <= h {
			ops = append(ops, op{outcome: inf, miss: true})
			continue
		}
		w.inFlight = append(w.inFlight, inf)
	}
	return ops
}
