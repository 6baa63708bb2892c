package main

import (
	"fmt"
	"log"
	"math/rand/v2"
	"sync"
	"sync/atomic"
)

// Mode is the executor's availability mode.
type Mode string

const (
	// ModeUp serves every endpoint normally.
	ModeUp Mode = "up"
	// ModeRefuse closes /health and /v1/inference connections abruptly.
	ModeRefuse Mode = "refuse"
	// ModeHang blocks /health and /v1/inference until the executor comes
	// back, the client gives up, the hang bound passes, or shutdown.
	ModeHang Mode = "hang"
)

// parseDarkMode accepts the two dark modes of POST /control/dark.
func parseDarkMode(s string) (Mode, error) {
	switch Mode(s) {
	case ModeRefuse, ModeHang:
		return Mode(s), nil
	}
	return "", fmt.Errorf("mode must be %q or %q, got %q", ModeRefuse, ModeHang, s)
}

// Counters are the request counters reported by GET /control/state.
type Counters struct {
	HealthServed     uint64 `json:"health_served"`
	InferencesServed uint64 `json:"inferences_served"`
	InferencesFailed uint64 `json:"inferences_failed"`
	RequestsRefused  uint64 `json:"requests_refused"`
	RequestsHung     uint64 `json:"requests_hung"`
	BadRequests      uint64 `json:"bad_requests"`
	// CanariesSeen counts valid inference requests whose id is not the
	// load driver's (canaries, see canary.go); CanariesSpared those of
	// them served although the failure draw said fail (spare_canaries).
	CanariesSeen   uint64 `json:"canaries_seen"`
	CanariesSpared uint64 `json:"canaries_spared"`
}

// Snapshot is the JSON body of GET /control/state and of every control reply.
type Snapshot struct {
	Name    string `json:"name"`
	Model   string `json:"model"`
	Mode    Mode   `json:"mode"`
	FailPct int    `json:"fail_pct"`
	// SpareCanaries: canaries are served whatever fail_pct says.
	SpareCanaries bool     `json:"spare_canaries"`
	LatencyMs     int64    `json:"latency_ms"`
	Seed          uint64   `json:"seed"`
	Counters      Counters `json:"counters"`
}

// State is the concurrency-safe mutable state of the fake executor.
type State struct {
	logger *log.Logger

	mu      sync.Mutex
	mode    Mode
	failPct int
	spare   bool          // spare canaries from injected failures
	rng     *rand.Rand    // guarded by mu; one draw per failure decision
	changed chan struct{} // closed and replaced on every mode change

	stopOnce sync.Once
	stop     chan struct{} // closed on shutdown; releases hanging requests

	healthServed     atomic.Uint64
	inferencesServed atomic.Uint64
	inferencesFailed atomic.Uint64
	requestsRefused  atomic.Uint64
	requestsHung     atomic.Uint64
	badRequests      atomic.Uint64
	canariesSeen     atomic.Uint64
	canariesSpared   atomic.Uint64
}

// NewState returns an up executor state with a PCG source seeded by seed,
// failing failPct% of inferences, canaries spared if spare.
func NewState(logger *log.Logger, failPct int, spare bool, seed uint64) *State {
	return &State{
		logger:  logger,
		mode:    ModeUp,
		failPct: failPct,
		spare:   spare,
		rng:     rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)),
		changed: make(chan struct{}),
		stop:    make(chan struct{}),
	}
}

// Mode returns the current mode and a channel closed at the next mode change.
func (s *State) Mode() (Mode, <-chan struct{}) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.mode, s.changed
}

// SetMode switches the mode, waking requests that wait on the old one.
func (s *State) SetMode(m Mode) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.mode == m {
		return
	}
	old := s.mode
	s.mode = m
	close(s.changed)
	s.changed = make(chan struct{})
	s.logger.Printf("mode %s -> %s", old, m)
}

// SetFailPct sets the injected failure percentage (0..100).
func (s *State) SetFailPct(pct int) error {
	if pct < 0 || pct > 100 {
		return fmt.Errorf("fail pct must be in 0..100, got %d", pct)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failPct == pct {
		return nil
	}
	s.logger.Printf("fail_pct %d -> %d", s.failPct, pct)
	s.failPct = pct
	return nil
}

// SetSpareCanaries turns sparing canaries on or off.
func (s *State) SetSpareCanaries(spare bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.spare == spare {
		return
	}
	s.logger.Printf("spare_canaries %v -> %v", s.spare, spare)
	s.spare = spare
}

// ShouldFail draws once from the seeded source and reports whether this
// inference is an injected failure, and whether it is a canary spared
// from one. Every call consumes exactly one draw, whatever the percentage
// and whatever the request, so the sequence depends on the seed only and
// canaries fail at the same rate as organic requests unless spared.
func (s *State) ShouldFail(canary bool) (fail, spared bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	fail = s.rng.IntN(100) < s.failPct
	if fail && canary && s.spare {
		return false, true
	}
	return fail, false
}

// Stop releases every hanging request; it is called on shutdown.
func (s *State) Stop() {
	s.stopOnce.Do(func() {
		close(s.stop)
		s.logger.Printf("shutting down: releasing waiting requests")
	})
}

// Stopped returns a channel closed on shutdown.
func (s *State) Stopped() <-chan struct{} { return s.stop }

// Counters returns a copy of the request counters.
func (s *State) Counters() Counters {
	return Counters{
		HealthServed:     s.healthServed.Load(),
		InferencesServed: s.inferencesServed.Load(),
		InferencesFailed: s.inferencesFailed.Load(),
		RequestsRefused:  s.requestsRefused.Load(),
		RequestsHung:     s.requestsHung.Load(),
		BadRequests:      s.badRequests.Load(),
		CanariesSeen:     s.canariesSeen.Load(),
		CanariesSpared:   s.canariesSpared.Load(),
	}
}

// settings returns the mutable settings consistently.
func (s *State) settings() (Mode, int, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.mode, s.failPct, s.spare
}
