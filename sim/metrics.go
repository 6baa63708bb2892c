package sim

import "slices"

// episode is one fault of one executor, as a strategy handled it.
type episode struct {
	exec          int
	from, to, end int64 // fault [from, to); end: the epoch's end
	routed        int   // requests started on it during the fault
	routedToOut   int   // of those, before it was first out of the pool
	out           int64 // first block of the fault it was out (0: never)
	firstMiss     int64 // the expiry of its first missed request in the fault (0: none)
	back          int64 // first block from `to` on it was HEALTHY again (0: not in the epoch)
}

// metrics are one run's figures.
type metrics struct {
	c        Config
	plan     Plan
	episodes []*episode
	open     [][]*episode // per executor, its episodes this epoch
	// Honest executors: executor-epochs, those with an exclusion, and the
	// blocks they spent out of full-weight routing.
	honestEpochs, falseEpochs int
	honestOutBlocks           int64
	wasOut                    []bool
	// serviceEpochs: honest executor-epochs excluded on service evidence.
	serviceEpochs    int
	wasOutService    []bool
	probeSince       []int64 // block an executor entered PROBE (0: not probing)
	probeLatency     []int64
	refusals, starts int
	// griefed: epochs with a griefing campaign, and those in which its
	// target was out of the pool at some point.
	griefed, griefedOut int
	// griefedOutBlocks: blocks a campaign's target spent out of the
	// honest agents' routing (not HEALTHY) from the campaign's start;
	// griefedInactive: campaigns whose target the SPRT made INACTIVE.
	griefedOutBlocks         int64
	griefedInactive          int
	griefedInactiveThisEpoch bool
	maxOutPct                int // largest share of executors out at once, percent
	honestStopped            int // honest agents stopped, summed over epochs
}

func newMetrics(c Config) *metrics {
	return &metrics{c: c, open: make([][]*episode, c.Executors), wasOut: make([]bool, c.Executors),
		wasOutService: make([]bool, c.Executors), probeSince: make([]int64, c.Executors)}
}

func (m *metrics) newEpoch(p Plan, start int64) {
	m.plan = p
	for e := range m.open {
		m.open[e] = m.open[e][:0]
		m.wasOut[e], m.wasOutService[e] = false, false
		m.probeSince[e] = 0
		for _, f := range p.Faults[e] {
			ep := &episode{exec: e, from: f.From, to: f.To, end: start + m.c.EpochLength}
			m.open[e] = append(m.open[e], ep)
			m.episodes = append(m.episodes, ep)
		}
	}
}

func (m *metrics) afterStep(h int64, s Strategy) {
	out := 0
	for e := range m.open {
		st := s.State(e)
		if st != Healthy {
			out++
		}
		switch {
		case st == Probing && m.probeSince[e] == 0:
			m.probeSince[e] = h
		case st != Probing:
			m.probeSince[e] = 0
		}
		if m.plan.honest(e) {
			if st != Healthy {
				m.wasOut[e] = true
				m.honestOutBlocks++
				if ev, ok := s.(evidenceReader); ok && ev.OutOnService(e) {
					m.wasOutService[e] = true
				}
			}
			continue
		}
		for _, ep := range m.open[e] {
			switch {
			case h >= ep.from && h < ep.to && ep.out == 0 && (st == Excluded || st == Inactive):
				ep.out = h
			case h >= ep.to && ep.back == 0 && st == Healthy:
				ep.back = h
			}
		}
	}
	m.maxOutPct = max(m.maxOutPct, out*100/len(m.open))
	if g := m.plan.Grief; g.PerBlock > 0 && h >= g.From {
		switch st := s.State(g.Target); {
		case st == Inactive:
			m.griefedInactiveThisEpoch = true
			m.griefedOutBlocks++
		case st != Healthy:
			m.griefedOutBlocks++
		}
	}
}

func (m *metrics) started(h int64, inf *Inference, p Plan) {
	m.starts++
	if inf.Probe && m.probeSince[inf.Exec] > 0 {
		m.probeLatency = append(m.probeLatency, h-m.probeSince[inf.Exec])
		m.probeSince[inf.Exec] = -1 // counted; cleared when it leaves PROBE
	}
	for _, ep := range m.open[inf.Exec] {
		if h >= ep.from && h < ep.to {
			if inf.Miss && ep.firstMiss == 0 && inf.Agent < m.c.Agents {
				ep.firstMiss = inf.End
			}
			ep.routed++
			if ep.out == 0 {
				ep.routedToOut++
			}
		}
	}
}

func (m *metrics) refused(*Inference) { m.refusals++ }

// evidenceReader is a strategy that says on what evidence an executor is
// out.
type evidenceReader interface {
	OutOnService(e int) bool
}

// standingReader is a strategy that says how many honest agents it has
// stopped this epoch.
type standingReader interface {
	HonestStopped() int
}

// endEpochOf is endEpoch, reading the strategy's standing first.
func (m *metrics) endEpochOf(h int64, s Strategy) {
	if r, ok := s.(standingReader); ok {
		m.honestStopped += r.HonestStopped()
	}
	m.endEpoch(h)
}

func (m *metrics) endEpoch(int64) {
	if g := m.plan.Grief; g.PerBlock > 0 {
		m.griefed++
		if m.griefedInactiveThisEpoch {
			m.griefedInactive++
		}
		m.griefedInactiveThisEpoch = false
		if m.wasOut[g.Target] {
			m.griefedOut++
		}
	}
	for e := range m.open {
		if m.plan.honest(e) {
			m.honestEpochs++
			if m.wasOut[e] {
				m.falseEpochs++
			}
			if m.wasOutService[e] {
				m.serviceEpochs++
			}
		}
	}
}

// Figures are one scenario x strategy cell of the report.
type Figures struct {
	Scenario, Strategy string
	Episodes           int
	// RoutedBad: mean requests routed to a faulty executor per fault.
	RoutedBad float64
	// ToOutBlocks, ToOutInferences: median blocks and requests from the
	// fault's start to the executor being out of the pool; NeverOut
	// counts faults it was never out during.
	ToOutBlocks, ToOutInferences int64
	NeverOut                     int
	// FromMissBlocks: median blocks from the fault's first client miss
	// (its expiry) to the executor being out (faults out before any miss
	// count as 0; those with no miss are left out).
	FromMissBlocks int64
	// RecoveryBlocks: median blocks from the executor being back to it
	// being HEALTHY (faults it never recovered from in the epoch count at
	// the epoch's end); NotBack counts those.
	RecoveryBlocks int64
	NotBack        int
	// FalsePct: honest executor-epochs with an exclusion, percent;
	// HonestOutBlocks: blocks an honest executor spent out, per
	// executor-epoch.
	HonestEpochs int
	FalsePct     float64
	// FalseServicePct: honest executor-epochs excluded on service
	// evidence, percent.
	FalseServicePct float64
	// CanaryLoad: canaries per executor per block, all validators.
	CanaryLoad float64
	// HonestStopped: honest agents stopped (summed over epochs).
	HonestStopped   int
	HonestOutBlocks float64
	ProbeLatency    int64 // median blocks from PROBE to the probe's start
	Probes          int
	MaxOutPct       int
	Starts, Refused int
	// Griefed, GriefedOut: epochs with a griefing campaign, and those in
	// which its (honest) target was ever out; GriefedOutBlocks: the
	// target's blocks out of honest routing per campaign (mean);
	// GriefedInactive: campaigns whose target ended INACTIVE at some point.
	Griefed, GriefedOut int
	GriefedOutBlocks    float64
	GriefedInactive     int
}

func (m *metrics) figures(scenario, strategy string) Figures {
	f := Figures{Scenario: scenario, Strategy: strategy, Episodes: len(m.episodes), HonestEpochs: m.honestEpochs,
		Probes: len(m.probeLatency), MaxOutPct: m.maxOutPct, Starts: m.starts, Refused: m.refusals,
		Griefed: m.griefed, GriefedOut: m.griefedOut, GriefedInactive: m.griefedInactive, HonestStopped: m.honestStopped}
	if m.griefed > 0 {
		f.GriefedOutBlocks = float64(m.griefedOutBlocks) / float64(m.griefed)
	}
	var toOut, toOutInf, recovery, fromMiss []int64
	routed := 0
	for _, ep := range m.episodes {
		routed += ep.routed
		if ep.out == 0 {
			f.NeverOut++
		} else {
			toOut = append(toOut, ep.out-ep.from)
			toOutInf = append(toOutInf, int64(ep.routedToOut))
			if ep.firstMiss != 0 {
				fromMiss = append(fromMiss, max(0, ep.out-ep.firstMiss))
			}
		}
		if ep.to < ep.end && ep.out != 0 {
			if ep.back == 0 {
				f.NotBack++
				recovery = append(recovery, ep.end-ep.to)
			} else {
				recovery = append(recovery, ep.back-ep.to)
			}
		}
	}
	if len(m.episodes) > 0 {
		f.RoutedBad = float64(routed) / float64(len(m.episodes))
	}
	f.ToOutBlocks, f.ToOutInferences, f.FromMissBlocks = median(toOut), median(toOutInf), median(fromMiss)
	f.RecoveryBlocks, f.ProbeLatency = median(recovery), median(m.probeLatency)
	if m.honestEpochs > 0 {
		f.FalsePct = 100 * float64(m.falseEpochs) / float64(m.honestEpochs)
		f.FalseServicePct = 100 * float64(m.serviceEpochs) / float64(m.honestEpochs)
		f.HonestOutBlocks = float64(m.honestOutBlocks) / float64(m.honestEpochs)
	}
	return f
}

// median of xs, -1 when there are none.
func median(xs []int64) int64 {
	if len(xs) == 0 {
		return -1
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}
