package sim

import (
	"fmt"
	"math/rand/v2"

	"github.com/inferenced/inferenced/x/inference/aggregate"
)

// State is where a strategy has an executor after a block's step.
type State uint8

const (
	Healthy  State = iota
	Probing        // on probation, offered at a probe weight
	Excluded       // out of the pool until its cooldown passes
	Inactive       // the SPRT removed it for the rest of the epoch
)

// Inference is one request.
type Inference struct {
	ID    uint64
	Agent int // 0..Agents-1 honest; then the griefers
	Exec  int
	Start int64
	End   int64 // the finish's block, or the expiration height
	Miss  bool
	Probe bool
}

// Strategy is one way of deciding where requests go. The world calls it
// as the chain would: BeginBlock first in every block, then the block's
// finishes and starts, then the expiries (EndBlock).
type Strategy interface {
	// NewEpoch clears per-epoch state; start is the epoch's first block.
	NewEpoch(start int64)
	// BeginBlock is the block's first step; votes are what the
	// validators' votes of the previous block agreed on (none when the
	// strategy does not use attestation).
	BeginBlock(h int64, votes Votes)
	// Start admits a request at h. A request with Exec < 0 is routed by
	// the strategy's selection with seed; otherwise the agent named the
	// executor. It sets Exec and Probe and reports whether it was accepted.
	Start(h int64, inf *Inference, seed uint64) bool
	Finish(h int64, inf *Inference)
	Expire(h int64, inf *Inference)
	// State is where executor e stands now.
	State(e int) State
	// Attests reports whether the strategy uses the validators' votes.
	Attests() bool
}

// Votes are what a block's vote extensions give the next block's step:
// the liveness samples (aggregate) and, for a strategy that reads the
// validators' canaries, the service rates (service.Encode of the
// power-weighted medians).
type Votes struct {
	Attested []aggregate.Sample
	Service  []byte
}

// world runs one strategy through one scenario.
type world struct {
	c        Config
	sc       Scenario
	strategy Strategy
	plan     Plan
	// Streams: plans, monitors and the clients' seeds are drawn the same
	// for every strategy. Outcomes are drawn per request (draw), so the
	// same request fails the same way under every strategy that sends it
	// to an executor in the same condition.
	plans, monitors, clients *rand.Rand
	inflight                 [][]*Inference // by height modulo len
	canaries                 *canaries
	nextID                   uint64
	m                        *metrics
	trace                    func(h int64, ev string, inf *Inference)
}

func newWorld(c Config, sc Scenario, s Strategy) *world {
	return &world{
		c: c, sc: sc, strategy: s,
		plans:    rand.New(rand.NewPCG(c.Seed, 1)),
		monitors: rand.New(rand.NewPCG(c.Seed, 2)),
		clients:  rand.New(rand.NewPCG(c.Seed, 3)),
		inflight: make([][]*Inference, c.ExpirationBlocks+2),
		canaries: newCanaries(c),
		m:        newMetrics(c),
	}
}

func (w *world) epochs() int { return w.c.epochsOf(w.sc) }

// run simulates every epoch and returns the figures.
func (w *world) run() (*metrics, error) {
	var votes Votes
	for ep := 0; ep < w.epochs(); ep++ {
		start := 1 + int64(ep)*w.c.EpochLength
		w.plan = w.sc.plan(w.c, w.plans, start)
		w.strategy.NewEpoch(start)
		w.canaries.newEpoch(w.c, w.plan, start)
		// The keeper applies the old epoch's last votes before the boundary clears the breaker, and drops the
		// votes of a new epoch's first block (keeper.VoteGroup: they attest about the old epoch's group).
		votes = Votes{}
		w.m.newEpoch(w.plan, start)
		for h := start; h < start+w.c.EpochLength; h++ {
			if !w.strategy.Attests() {
				votes = Votes{}
			}
			w.strategy.BeginBlock(h, votes)
			w.m.afterStep(h, w.strategy)
			w.deliver(h, false)
			w.requests(h)
			w.deliver(h, true)
			if w.strategy.Attests() {
				var err error
				if votes, err = w.vote(h); err != nil {
					return nil, fmt.Errorf("block %d votes: %w", h, err)
				}
				if h == start && ep > 0 {
					votes = Votes{}
				}
			}
		}
		w.m.endEpochOf(start+w.c.EpochLength, w.strategy)
	}
	return w.m, nil
}

func (w *world) slot(h int64) *[]*Inference { return &w.inflight[h%int64(len(w.inflight))] }

// deliver hands the strategy the finishes (a finish tx in block h) or the
// expiries (EndBlock of h) due at h.
func (w *world) deliver(h int64, expiries bool) {
	due := w.slot(h)
	kept := (*due)[:0]
	for _, inf := range *due {
		if inf.End != h || inf.Miss != expiries {
			kept = append(kept, inf)
			continue
		}
		if expiries {
			w.strategy.Expire(h, inf)
		} else {
			w.strategy.Finish(h, inf)
		}
		if w.trace != nil {
			w.trace(h, map[bool]string{false: "finish", true: "expire"}[expiries], inf)
		}
	}
	*due = kept
}

// requests are the block's starts: the clients' load through the honest
// agents round-robin, then each griefer's real requests and its starts on
// the target.
func (w *world) requests(h int64) {
	if !w.plan.Idle {
		for i := 0; i < w.c.RequestsPerBlock; i++ {
			w.start(h, int(w.nextID%uint64(w.c.Agents)), -1)
		}
	}
	if g := w.plan.Grief; g.PerBlock > 0 && h >= g.From {
		for a := w.c.Agents; a < w.c.Agents+w.c.Griefers; a++ {
			for i := 0; i < g.Forward; i++ {
				w.start(h, a, -1)
			}
			for i := 0; i < g.PerBlock; i++ {
				w.start(h, a, g.Target)
			}
		}
	}
}

// start sends one request of agent's, to exec or (exec < 0) where
// selection routes it. A griefer never forwards the starts it names the
// target in.
func (w *world) start(h int64, agent, exec int) {
	griefs := agent >= w.c.Agents && exec >= 0
	w.nextID++
	inf := &Inference{ID: w.nextID, Agent: agent, Exec: exec, Start: h}
	seed := w.clients.Uint64()
	if !w.strategy.Start(h, inf, seed) {
		w.m.refused(inf)
		return
	}
	switch {
	case griefs:
		inf.Miss = true
	case w.plan.ClientSide.covers(h) && w.draw(inf.ID, 1) < w.plan.ClientSide.MissBP:
		inf.Miss = true
	default:
		inf.Miss = w.draw(inf.ID, 2) < w.plan.missBP(inf.Exec, h)
	}
	inf.End = h + 1
	if inf.Miss {
		inf.End = h + w.c.ExpirationBlocks
	}
	*w.slot(inf.End) = append(*w.slot(inf.End), inf)
	w.m.started(h, inf, w.plan)
	if w.trace != nil {
		w.trace(h, "start", inf)
	}
}

// draw is request id's k-th random number in [0, 10,000): a hash of the
// seed, the id and k (SplitMix64's finalizer), the same in every run.
func (w *world) draw(id uint64, k uint64) int {
	z := w.c.Seed*0x9e3779b97f4a7c15 ^ id*0xbf58476d1ce4e5b9 ^ k*0x94d049bb133111eb
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	z ^= z >> 31
	return int(z % 10_000)
}
