package sim

import (
	"math"

	"github.com/inferenced/inferenced/x/inference/breaker"
)

// Candidate rules that compare an executor with its peers, after Envoy's
// success-rate outlier ejection: an executor is an outlier when its
// success rate is below mean - 1.9 stdev of the hosts with enough volume
// (at least peerMinHosts of them). Evaluated on the breaker's counted
// traffic window, so the evidence is the same as the chain's rule.
const (
	peerStdevFactor = 1.9
	peerMinVolume   = 32 // samples in the window before a host is judged (at most the window)
	peerMinHosts    = 5
	peerInterval    = 10 // blocks between Envoy's ejection sweeps
)

// peerStats returns the peers' mean and stdev of success rate and whether
// enough hosts have volume.
func (s *chain) peerStats() (mean, sd float64, ok bool) {
	var sum, sq float64
	n := 0
	for e := range s.execs {
		rate, vol := s.successRate(e)
		if vol < s.peerVolume() {
			continue
		}
		sum += rate
		sq += rate * rate
		n++
	}
	if n < peerMinHosts {
		return 0, 0, false
	}
	mean = sum / float64(n)
	return mean, math.Sqrt(max(0, sq/float64(n)-mean*mean)), true
}

func (s *chain) successRate(e int) (float64, uint32) {
	x := &s.execs[e]
	w := x.x.Record.Windows[breaker.Traffic]
	if !x.stored {
		w = breaker.Prefilled(x.finished)
	}
	n, misses := w.Last(s.p.Breaker.Rules[breaker.Traffic].WindowSamples)
	if n == 0 {
		return 1, 0
	}
	return 1 - float64(misses)/float64(n), n
}

func (s *chain) outlier(e int) bool {
	mean, sd, ok := s.peerStats()
	rate, vol := s.successRate(e)
	return ok && vol >= s.peerVolume() && rate < mean-peerStdevFactor*sd
}

// peerVolume is how many samples a host needs in its window to be judged:
// Envoy's request volume, capped by the traffic window.
func (s *chain) peerVolume() uint32 {
	return min(peerMinVolume, s.p.Breaker.Rules[breaker.Traffic].WindowSamples)
}

// newEnvoy is Envoy's rule in place of the chain's traffic trip rule:
// every peerInterval blocks each outlier is ejected (under the cap), with
// the chain's cooldown, probe and attestation otherwise.
func newEnvoy(c Config) (*chain, error) {
	s, err := newChain("envoy-peer", c, true)
	if err != nil {
		return nil, err
	}
	s.p.Breaker.Rules[breaker.Traffic].ThresholdPct = 100 // never trips on its own
	s.p.Breaker.Rules[breaker.Traffic].ConsecutiveMisses = breaker.MaxWindow
	forced := s.p.Breaker
	forced.Rules[breaker.Traffic] = breaker.TripRule{WindowSamples: 1, MinSamples: 1, ThresholdPct: 1, ConsecutiveMisses: 1}
	s.each = func(h int64) {
		if h%peerInterval != 0 {
			return
		}
		var out []int
		for e := range s.execs {
			if s.execs[e].x.Record.State == breaker.Healthy && s.outlier(e) {
				out = append(out, e)
			}
		}
		for _, e := range out {
			x := &s.execs[e]
			var t breaker.Transition
			x.x.Record, t = breaker.Observe(x.x.Record, breaker.Sample{Kind: breaker.Traffic, Miss: true, StartedAt: h}, forced, h, s.mayExclude(e, false))
			if t.Changed() {
				x.stored = true
				s.moved(e, t)
			}
		}
	}
	return s, nil
}

// newGated is the chain's rule, except that a traffic trip excludes only
// an executor that is also an outlier among its peers: a network-wide rise
// trips no one.
func newGated(c Config) (*chain, error) {
	s, err := newChain("chain+peer-gate", c, true)
	if err != nil {
		return nil, err
	}
	s.gate = s.outlier
	return s, nil
}
