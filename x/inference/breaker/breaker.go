// Package breaker is the fast circuit breaker's state machine, free of SDK
// and store types: a record, one sample, the params and the height give the
// next record and the transition. The keeper stores records and decides
// which samples reach them; everything here is integer arithmetic on values.
package breaker

import "fmt"

// State is where an executor stands in the breaker.
type State uint8

const (
	Healthy State = iota
	Excluded
	Probe
)

func (s State) String() string {
	switch s {
	case Healthy:
		return "HEALTHY"
	case Excluded:
		return "EXCLUDED"
	case Probe:
		return "PROBE"
	}
	return fmt.Sprintf("State(%d)", uint8(s))
}

// Kind is a sample source. Each kind has its own window and trip rule.
type Kind uint8

const (
	// Traffic samples are on-chain outcomes of real inferences.
	Traffic Kind = iota
	// Attested samples are the validators' majority verdict, one per block.
	Attested
	// Service samples are the validators' canaries, one per block: a miss
	// when the attested failed share stands out from the peers'.
	Service
	numKinds
)

func (k Kind) String() string {
	switch k {
	case Traffic:
		return "traffic"
	case Attested:
		return "attested"
	case Service:
		return "service"
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// Reason says why a transition happened.
type Reason uint8

const (
	ReasonNone Reason = iota
	ReasonMissRate
	ReasonConsecutiveMisses
	ReasonCooldownPassed
	ReasonProbeSucceeded
	ReasonAttestedOK
	ReasonProbeMissed
	ReasonCapRefused
	ReasonServiceOK
	// ReasonScoped: a traffic trip of an executor the canaries see serving,
	// after one such exclusion this epoch: it stays HEALTHY for everyone
	// but the agents whose misses counted (judge.Executor.Scope).
	ReasonScoped
)

func (r Reason) String() string {
	switch r {
	case ReasonNone:
		return "none"
	case ReasonMissRate:
		return "miss_rate"
	case ReasonConsecutiveMisses:
		return "consecutive_misses"
	case ReasonCooldownPassed:
		return "cooldown_passed"
	case ReasonProbeSucceeded:
		return "probe_succeeded"
	case ReasonAttestedOK:
		return "attested_ok"
	case ReasonProbeMissed:
		return "probe_missed"
	case ReasonCapRefused:
		return "cap_refused"
	case ReasonServiceOK:
		return "service_ok"
	case ReasonScoped:
		return "scoped"
	}
	return fmt.Sprintf("Reason(%d)", uint8(r))
}

// Record is one executor's breaker state within the current epoch. The zero
// Record is a healthy executor with no history.
type Record struct {
	State   State
	Windows [numKinds]Window
	// Evidence is the kind of sample that caused the last exclusion; only
	// evidence of the same strength restores (see Observe).
	Evidence Kind
	// Reason is why the last transition happened.
	Reason     Reason
	Since      int64 // height of the last state change
	ExcludedAt int64
	Cooldown   uint64
	// Exclusions counts exclusions this epoch; each re-exclusion doubles
	// the cooldown.
	Exclusions  uint32
	CapRefusals uint32
	// ProbeInFlight is set while the probe inference runs.
	ProbeInFlight bool
	// ServiceOKAt is the height of the last service ok (0: none while the
	// record lived): the canaries saw the executor serving then.
	ServiceOKAt int64
	// Overruled counts this epoch's traffic exclusions of the executor
	// while the canaries saw it serving; Scopes its traffic trips scoped
	// to their agents instead (each doubles the next scope's length).
	Overruled, Scopes uint32
}

// Serving reports whether the canaries saw the executor serving in the
// block before height (the step applies traffic before service samples,
// so that is the newest one a traffic outcome at height can meet).
func (r Record) Serving(height int64) bool { return r.ServiceOKAt > 0 && r.ServiceOKAt >= height-1 }

// EligibleAt is the height from which an EXCLUDED record becomes PROBE.
func (r Record) EligibleAt() int64 { return r.ExcludedAt + int64(r.Cooldown) }

// Plain reports whether the record carries nothing a fresh healthy executor
// would not: it then needs no storage.
func (r Record) Plain() bool {
	return r.State == Healthy && r.Exclusions == 0 && r.CapRefusals == 0 && r.Overruled == 0 && r.Scopes == 0 &&
		!r.Windows[Traffic].HasMiss() && !r.Windows[Attested].HasMiss() && !r.Windows[Service].HasMiss()
}

// Sample is one observation of an executor. Probe marks the outcome of the
// executor's probe inference; only traffic samples can be probes.
// StartedAt is, for a traffic sample, the height its inference started.
type Sample struct {
	Kind      Kind
	Miss      bool
	Probe     bool
	StartedAt int64
}

// Transition describes what one step did. From == To means no state change.
type Transition struct {
	From, To        State
	Reason          Reason
	Kind            Kind
	Samples, Misses uint32
	Cooldown        uint64
	Exclusions      uint32
}

// Changed reports whether the state changed.
func (t Transition) Changed() bool { return t.From != t.To }

// Observe applies one sample. mayExclude is asked only when a HEALTHY record
// trips; if it says no (the exclusion cap), the record stays HEALTHY and the
// refusal is counted.
//
// The outcome of an inference started before the record's last state change
// is stale: whatever it says about the executor was true before the
// exclusion or the recovery that followed, so it is ignored in every state.
func Observe(r Record, s Sample, p Params, height int64, mayExclude func() bool) (Record, Transition) {
	if s.Kind >= numKinds || (s.Kind == Traffic && s.StartedAt < r.Since) {
		return r, Transition{From: r.State, To: r.State}
	}
	if s.Kind == Service && !s.Miss {
		r.ServiceOKAt = height
	}
	switch r.State {
	case Healthy:
		return observeHealthy(r, s, p, height, mayExclude)
	case Probe:
		return observeProbe(r, s, p, height)
	}
	// EXCLUDED: nothing observed during the cooldown says the executor
	// recovered; stale outcomes of requests sent before the exclusion
	// must not count either way.
	return r, Transition{From: r.State, To: r.State}
}

func observeHealthy(r Record, s Sample, p Params, height int64, mayExclude func() bool) (Record, Transition) {
	r.Windows[s.Kind] = r.Windows[s.Kind].Push(s.Miss)
	rule := p.Rules[s.Kind]
	tripped, why := rule.trips(r.Windows[s.Kind])
	samples, misses := r.Windows[s.Kind].Last(rule.WindowSamples)
	t := Transition{From: Healthy, To: Healthy, Kind: s.Kind, Samples: samples, Misses: misses}
	if !tripped {
		return r, t
	}
	serving := s.Kind == Traffic && r.Serving(height)
	if serving && r.Overruled > 0 {
		// Traffic evidence against an executor the canaries see serving
		// has had its one exclusion this epoch: from now on it is the
		// failing agents' problem, not everyone's.
		r.Scopes++
		r.Windows[Traffic] = Window{}
		t.Reason, t.Cooldown = ReasonScoped, ScopeCooldown(r, p)
		return r, t
	}
	if mayExclude != nil && !mayExclude() {
		r.CapRefusals++
		t.Reason = ReasonCapRefused
		return r, t
	}
	r = exclude(r, s.Kind, why, p, height)
	if serving {
		r.Overruled++
	}
	t.To, t.Reason, t.Cooldown, t.Exclusions = Excluded, why, r.Cooldown, r.Exclusions
	return r, t
}

// ScopeCooldown is how long a scoped record keeps its agents out: the
// initial cooldown on its first scope this epoch, doubled on each later
// one, within [initial, max].
func ScopeCooldown(r Record, p Params) uint64 {
	c := min(p.InitialCooldown, p.MaxCooldown)
	for i := uint32(1); i < r.Scopes && c < p.MaxCooldown; i++ {
		c = min(2*c, p.MaxCooldown)
	}
	return c
}

func observeProbe(r Record, s Sample, p Params, height int64) (Record, Transition) {
	t := Transition{From: Probe, To: Probe, Kind: s.Kind}
	switch {
	case s.Kind == Traffic && (!s.Probe || r.Evidence == Service):
		// Other traffic says nothing about the recovery: the probe does.
		// After an exclusion on service the canaries decide the probe, so
		// no agent can take it or spoil it (there is no slot: GateOf).
		return r, t
	case s.Miss:
		r = exclude(r, s.Kind, ReasonProbeMissed, p, height)
		t.To, t.Reason, t.Cooldown, t.Exclusions = Excluded, ReasonProbeMissed, r.Cooldown, r.Exclusions
		t.Samples, t.Misses = 1, 1
		return r, t
	case !restores(s.Kind, r.Evidence):
		return r, t
	}
	reason := ReasonProbeSucceeded
	switch s.Kind {
	case Attested:
		reason = ReasonAttestedOK
	case Service:
		reason = ReasonServiceOK
	}
	r = enter(r, Healthy, reason, height)
	t.To, t.Reason, t.Samples = Healthy, reason, 1
	return r, t
}

// restores reports whether an ok of kind restores a PROBE excluded on
// evidence: restoring evidence is at least as strong as what excluded.
// The probe inference and the canaries prove inferences succeed, whatever
// excluded (after a traffic exclusion the canaries decide the probe, so
// agents cannot spoil it; an executor that serves canaries and fails
// clients is then scoped to the failing agents, not readmitted for free);
// a passing health check proves only liveness.
func restores(kind, evidence Kind) bool {
	if kind == Attested {
		return evidence == Attested
	}
	return true
}

// Promote moves an EXCLUDED record whose cooldown has passed to PROBE.
func Promote(r Record, height int64) (Record, Transition) {
	if r.State != Excluded || height < r.EligibleAt() {
		return r, Transition{From: r.State, To: r.State}
	}
	r = enter(r, Probe, ReasonCooldownPassed, height)
	return r, Transition{From: Excluded, To: Probe, Reason: ReasonCooldownPassed,
		Cooldown: r.Cooldown, Exclusions: r.Exclusions}
}

// ClaimProbe marks the probe slot taken. It reports false when the record is
// not a PROBE or the slot is already taken.
func ClaimProbe(r Record) (Record, bool) {
	if r.State != Probe || r.ProbeInFlight || !r.OffersProbe() {
		return r, false
	}
	r.ProbeInFlight = true
	return r, true
}

// OffersProbe reports whether a PROBE record offers agents a probe slot:
// not after an exclusion on service, which the canaries decide.
func (r Record) OffersProbe() bool { return r.Evidence != Service }

// ReleaseProbe frees the probe slot of a PROBE record whose probe ended
// without a verdict (it expired and nothing corroborates the miss): the
// executor stays PROBE and is offered a new probe.
func ReleaseProbe(r Record) Record {
	if r.State == Probe {
		r.ProbeInFlight = false
	}
	return r
}

// NextCooldown is the cooldown of the next exclusion: the initial one on the
// first exclusion in the epoch, then doubled, always within [initial, max].
func NextCooldown(r Record, p Params) uint64 {
	if r.Exclusions == 0 {
		return min(p.InitialCooldown, p.MaxCooldown)
	}
	next := r.Cooldown
	if next <= p.MaxCooldown/2 {
		next *= 2
	} else {
		next = p.MaxCooldown
	}
	return min(max(next, p.InitialCooldown), p.MaxCooldown)
}

func exclude(r Record, kind Kind, why Reason, p Params, height int64) Record {
	r.Cooldown = NextCooldown(r, p)
	r.Exclusions++
	r.ExcludedAt = height
	r.Evidence = kind
	return enter(r, Excluded, why, height)
}

// enter changes state; windows start empty on every change, so evidence from
// before a state change never decides the next one.
func enter(r Record, s State, why Reason, height int64) Record {
	r.State = s
	r.Reason = why
	r.Since = height
	r.Windows = [numKinds]Window{}
	r.ProbeInFlight = false
	return r
}
