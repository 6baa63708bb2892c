package sim

import "math/rand/v2"

// Fault is a stretch of blocks [From, To) in which an executor misses
// MissBP basis points (1/10,000) of its requests; Down also fails its health endpoint, so
// the validators' monitors see it.
type Fault struct {
	From, To int64
	MissBP   int
	Down     bool
	// SparesCanaries: the executor recognises the validators' canaries
	// and serves them (at the baseline), failing only clients' requests.
	SparesCanaries bool
}

func (f Fault) covers(h int64) bool { return h >= f.From && h < f.To }

// Plan is one epoch of a scenario: who fails when.
type Plan struct {
	// BaselineBP is every executor's own honest miss rate.
	BaselineBP int
	// Faults per executor (nil: honest all epoch).
	Faults [][]Fault
	// ClientSide fails requests whatever executor they reach (the client
	// side's fault), through every honest agent.
	ClientSide Fault
	// Idle: no client requests at all.
	Idle bool
	// Grief: a griefing campaign against one executor.
	Grief Grief
}

// Grief is a griefing campaign: from From on, each of Config.Griefers
// agents starts PerBlock inferences a block on Target and never forwards
// them, and sends Forward requests a block the way clients do (routed by
// selection) and forwards those, so that its standing grows with real
// work as a colluder's would.
type Grief struct {
	PerBlock, Forward int
	Target            int
	From              int64
}

// Scenario builds each epoch's plan.
type Scenario struct {
	Name, About string
	// Epochs overrides Config.Epochs (the degraded scenarios need more
	// faults for a stable median); Honest runs Config.HonestEpochs (the
	// honest baselines need many executor-epochs to resolve 1%).
	Epochs int
	Honest bool
	// Agents overrides Config.Agents (the honest transfer agents), and
	// Griefers Config.Griefers (the agents of a griefing campaign).
	Agents, Griefers int
	plan             func(c Config, r *rand.Rand, start int64) Plan
}

// config is c as scenario sc runs it.
func (sc Scenario) config(c Config) Config {
	if sc.Agents > 0 {
		c.Agents = sc.Agents
	}
	if sc.Griefers > 0 {
		c.Griefers = sc.Griefers
	}
	return c
}

const (
	honestBP     = 325 // gonka's network-wide miss rate, 3.25%
	outageBlocks = 1_000
)

// Scenarios are the scenarios, in report order.
func Scenarios() []Scenario {
	return []Scenario{
		{Name: "dead", About: "targets go dark at a random block, back after 1,000 blocks", plan: outage(10_000, true, false)},
		{Name: "degraded-28", About: "targets miss 28% from a random block on (health endpoint up)", Epochs: 5, plan: outage(2_800, false, false)},
		{Name: "degraded-40", About: "targets miss 40% from a random block on", Epochs: 5, plan: outage(4_000, false, false)},
		{Name: "degraded-28-1-agent", About: "degraded-28 with one honest transfer agent", Epochs: 5, Agents: 1, plan: outage(2_800, false, false)},
		{Name: "degraded-28-2-agents", About: "degraded-28 with two honest transfer agents", Epochs: 5, Agents: 2, plan: outage(2_800, false, false)},
		{Name: "degraded-28-idle", About: "no client traffic; targets miss 28% (health endpoint up)", Epochs: 5, plan: outage(2_800, false, true)},
		{Name: "degraded-40-idle", About: "no client traffic; targets miss 40%", Epochs: 5, plan: outage(4_000, false, true)},
		{Name: "canary-aware", About: "targets serve the validators' canaries and miss 30% of clients' requests", Epochs: 5, plan: canaryAware(3_000)},
		{Name: "flapping", About: "targets dark 100 blocks, up 300, repeatedly", plan: flapping},
		{Name: "idle", About: "no client traffic; targets go dark for 1,000 blocks", plan: idle},
		{Name: "dc-loss", About: "30% of executors dark at once for 1,000 blocks", plan: datacenterLoss},
		{Name: "honest-3.25", About: "every executor misses 3.25% at random", Honest: true, plan: honest(325)},
		{Name: "honest-5", About: "every executor misses 5% at random", Honest: true, plan: honest(500)},
		{Name: "honest-10", About: "every executor misses 10% at random", Honest: true, plan: honest(1_000)},
		{Name: "rise", About: "every request misses 8% more for an hour (720 blocks), the client side's fault", plan: rise},
		{Name: "grief", About: "one griefing agent starts 2 inferences a block on a healthy executor and never forwards them", plan: grief},
		{Name: "collusion", About: "two colluding agents each start 1 inference a block on a healthy executor and never forward it, while forwarding 2 real requests a block", Griefers: 2, plan: collusion},
	}
}

// onset is a fault's first block: a random block in the epoch's second
// eighth to its half, so every fault has room to be excluded and recover.
func onset(c Config, r *rand.Rand, start int64) int64 {
	return start + c.EpochLength/8 + r.Int64N(c.EpochLength*3/8)
}

func newPlan(c Config) Plan {
	return Plan{BaselineBP: honestBP, Faults: make([][]Fault, c.Executors)}
}

// targets are the executors a fault hits: Targets of them, seeded.
func targets(c Config, r *rand.Rand, n int) []int {
	return r.Perm(c.Executors)[:n]
}

func outage(bp int, down, idle bool) func(Config, *rand.Rand, int64) Plan {
	return func(c Config, r *rand.Rand, start int64) Plan {
		p := newPlan(c)
		p.Idle = idle
		for _, e := range targets(c, r, c.Targets) {
			from := onset(c, r, start)
			to := start + c.EpochLength
			if down {
				to = from + outageBlocks
			}
			p.Faults[e] = []Fault{{From: from, To: to, MissBP: bp, Down: down}}
		}
		return p
	}
}

var idle = outage(10_000, true, true)

// canaryAware: targets recognise canaries and serve them, failing bp of
// clients' requests from a random block on.
func canaryAware(bp int) func(Config, *rand.Rand, int64) Plan {
	return func(c Config, r *rand.Rand, start int64) Plan {
		p := outage(bp, false, false)(c, r, start)
		for e := range p.Faults {
			for i := range p.Faults[e] {
				p.Faults[e][i].SparesCanaries = true
			}
		}
		return p
	}
}

func flapping(c Config, r *rand.Rand, start int64) Plan {
	p := newPlan(c)
	for _, e := range targets(c, r, c.Targets) {
		for from := onset(c, r, start); from+100 < start+c.EpochLength; from += 400 {
			p.Faults[e] = append(p.Faults[e], Fault{From: from, To: from + 100, MissBP: 10_000, Down: true})
		}
	}
	return p
}

func datacenterLoss(c Config, r *rand.Rand, start int64) Plan {
	p := newPlan(c)
	from := onset(c, r, start)
	for _, e := range targets(c, r, c.Executors*3/10) {
		p.Faults[e] = []Fault{{From: from, To: from + outageBlocks, MissBP: 10_000, Down: true}}
	}
	return p
}

func honest(bp int) func(Config, *rand.Rand, int64) Plan {
	return func(c Config, _ *rand.Rand, _ int64) Plan {
		p := newPlan(c)
		p.BaselineBP = bp
		return p
	}
}

func rise(c Config, r *rand.Rand, start int64) Plan {
	p := newPlan(c)
	from := onset(c, r, start)
	p.ClientSide = Fault{From: from, To: from + 720, MissBP: 800}
	return p
}

func grief(c Config, r *rand.Rand, start int64) Plan {
	p := newPlan(c)
	p.Grief = Grief{PerBlock: 2, Target: r.IntN(c.Executors), From: onset(c, r, start)}
	return p
}

// collusion is P5's pair (TestCollusionCostPerEpoch) at gonka's shape:
// each colluder pads its standing with real work while starving the
// target, which the validators' canaries see serving.
func collusion(c Config, r *rand.Rand, start int64) Plan {
	p := newPlan(c)
	p.Grief = Grief{PerBlock: 1, Forward: 2, Target: r.IntN(c.Executors), From: onset(c, r, start)}
	return p
}

// missBP is executor e's own miss rate at height h.
func (p Plan) missBP(e int, h int64) int {
	for _, f := range p.Faults[e] {
		if f.covers(h) {
			return f.MissBP
		}
	}
	return p.BaselineBP
}

// canaryMissBP is executor e's miss rate at h for the validators'
// canaries: its own rate, unless it spares them.
func (p Plan) canaryMissBP(e int, h int64) int {
	for _, f := range p.Faults[e] {
		if f.covers(h) {
			if f.SparesCanaries {
				return p.BaselineBP
			}
			return f.MissBP
		}
	}
	return p.BaselineBP
}

// down reports whether e's health endpoint fails at h.
func (p Plan) down(e int, h int64) bool {
	for _, f := range p.Faults[e] {
		if f.covers(h) && f.Down {
			return true
		}
	}
	return false
}

// faulty reports whether e has any fault this epoch (it is then not an
// honest executor for the false-exclusion figures).
// honest reports whether e has no fault of its own this epoch: any
// exclusion of it is a false one (a griefed executor is honest).
func (p Plan) honest(e int) bool { return len(p.Faults[e]) == 0 }
