package sim

import (
	"fmt"

	"cosmossdk.io/math"

	"github.com/inferenced/inferenced/x/inference/lottery"
	"github.com/inferenced/inferenced/x/inference/sprt"
)

// baseline is a design this project replaces: gonka's SPRT alone, no
// breaker at all, or the seed's breaker as its request wrote it. Every
// miss counts (there are no accountable agents), and selection is the
// same seeded lottery.
type baseline struct {
	name    string
	c       Config
	test    *sprt.Test // nil: no SPRT (gonka mainnet's 0.99/0.99/1e9 never fires)
	seed    bool       // the seed's cumulative breaker on top
	weights []uint64
	execs   []baselineExec
	pool    []int
	poolW   []uint64
}

// The seed's four params, as its request set them.
const (
	seedThresholdPct    = 25
	seedMinSamples      = 4
	seedInitialCooldown = 50
	seedMaxCooldown     = 500
)

type baselineExec struct {
	finished, missed uint64
	inactive         bool
	// The seed's CircuitBreakerEntry.
	state      State
	excludedAt int64
	cooldown   uint64
}

func newBaseline(name string, c Config, withSPRT, seed bool) (*baseline, error) {
	b := &baseline{name: name, c: c, seed: seed, weights: c.weights()}
	if withSPRT {
		p := c.Params
		t, err := sprt.New(p.DowntimeGoodPercentage, p.DowntimeBadPercentage, p.DowntimeHThreshold)
		if err != nil {
			return nil, fmt.Errorf("sprt: %w", err)
		}
		b.test = &t
	}
	return b, nil
}

// gonkaSPRT checks that gonka mainnet's SPRT settings are indeed a test
// that never fires: this project's sprt package refuses them (bad must
// exceed good), which is why "none" runs without one.
func gonkaSPRT() error {
	_, err := sprt.New(math.LegacyMustNewDecFromStr("0.99"), math.LegacyMustNewDecFromStr("0.99"), math.LegacyNewDec(1_000_000_000))
	return err
}

func (b *baseline) Attests() bool { return false }

func (b *baseline) NewEpoch(int64) { b.execs = make([]baselineExec, b.c.Executors) }

func (b *baseline) BeginBlock(int64, Votes) {}

func (b *baseline) State(e int) State {
	if b.execs[e].inactive {
		return Inactive
	}
	return b.execs[e].state
}

func (b *baseline) Start(h int64, inf *Inference, seed uint64) bool {
	if inf.Exec >= 0 {
		x := &b.execs[inf.Exec]
		return !x.inactive && (!b.seed || b.admit(h, inf.Exec) > 0)
	}
	b.pool, b.poolW = b.pool[:0], b.poolW[:0]
	for e := range b.execs {
		if b.execs[e].inactive {
			continue
		}
		w := b.weights[e]
		if b.seed {
			w = b.admit(h, e)
		}
		if w > 0 {
			b.pool, b.poolW = append(b.pool, e), append(b.poolW, w)
		}
	}
	if len(b.pool) == 0 { // the seed's safety fallback: every member
		for e := range b.execs {
			if !b.execs[e].inactive {
				b.pool, b.poolW = append(b.pool, e), append(b.poolW, b.weights[e])
			}
		}
	}
	i, err := lottery.Draw(b.poolW, seed)
	if err != nil {
		return false
	}
	inf.Exec = b.pool[i]
	inf.Probe = b.seed && b.execs[inf.Exec].state == Probing
	return true
}

// admit is the seed's createHealthFilterFn for one member at height h: it
// promotes, trips on the cumulative epoch counters, and returns the weight
// the member is offered at (0: filtered out; a PROBE member weight 1).
func (b *baseline) admit(h int64, e int) uint64 {
	x := &b.execs[e]
	switch x.state {
	case Probing:
		return 1
	case Excluded:
		if h >= x.excludedAt+int64(x.cooldown) {
			x.state = Probing
			return 1
		}
		return 0
	}
	total := x.finished + x.missed
	if total >= seedMinSamples && x.missed*100 > seedThresholdPct*total {
		x.state, x.excludedAt = Excluded, h
		if x.cooldown == 0 {
			x.cooldown = seedInitialCooldown
		}
		return 0
	}
	return b.weights[e]
}

// Finish is the seed's RecordCBResult(true): a PROBE member is restored
// and its cooldown reset (its epoch counters stay what they were).
func (b *baseline) Finish(_ int64, inf *Inference) {
	x := &b.execs[inf.Exec]
	x.finished++
	if b.seed && x.state == Probing {
		x.state, x.cooldown = Healthy, 0
	}
}

// Expire is the seed's RecordCBResult(false) and the SPRT's miss.
func (b *baseline) Expire(h int64, inf *Inference) {
	x := &b.execs[inf.Exec]
	x.missed++
	if b.test != nil && !x.inactive && b.test.IsDown(x.missed, x.finished) {
		x.inactive = true
	}
	if b.seed && x.state == Probing {
		x.state, x.excludedAt = Excluded, h
		x.cooldown = min(2*max(x.cooldown, 1), seedMaxCooldown)
	}
}
