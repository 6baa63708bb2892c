package breaker

import (
	"errors"
	"fmt"
)

// TripRule says when one kind of sample trips the breaker: at least
// MinSamples samples with a miss rate above ThresholdPct over the last
// WindowSamples, or ConsecutiveMisses misses in a row. Each sample kind has
// its own rule, so traffic (noisy) and attested (majority-agreed) samples can
// be calibrated apart.
type TripRule struct {
	WindowSamples     uint32
	MinSamples        uint32
	ThresholdPct      uint32
	ConsecutiveMisses uint32
}

// Params are the breaker's settings.
type Params struct {
	Rules           [numKinds]TripRule
	InitialCooldown uint64
	MaxCooldown     uint64
}

// Validate checks a trip rule.
func (r TripRule) Validate() error {
	switch {
	case r.ThresholdPct < 1 || r.ThresholdPct > 100:
		return fmt.Errorf("miss threshold %d%% is outside 1..100", r.ThresholdPct)
	case r.MinSamples < 1:
		return errors.New("min samples must be at least 1")
	case r.MinSamples > r.WindowSamples:
		return fmt.Errorf("min samples %d exceed the window of %d", r.MinSamples, r.WindowSamples)
	case r.WindowSamples > MaxWindow:
		return fmt.Errorf("window of %d samples exceeds %d", r.WindowSamples, MaxWindow)
	case r.ConsecutiveMisses < 1 || r.ConsecutiveMisses > MaxWindow:
		return fmt.Errorf("consecutive misses %d is outside 1..%d", r.ConsecutiveMisses, MaxWindow)
	}
	return nil
}

// Validate checks the params.
func (p Params) Validate() error {
	for k, r := range p.Rules {
		if err := r.Validate(); err != nil {
			return fmt.Errorf("%s samples: %w", Kind(k), err)
		}
	}
	if p.InitialCooldown < 1 {
		return errors.New("initial cooldown must be at least 1 block")
	}
	if p.InitialCooldown > p.MaxCooldown {
		return fmt.Errorf("initial cooldown %d exceeds max cooldown %d", p.InitialCooldown, p.MaxCooldown)
	}
	return nil
}

// trips reports whether w trips rule r, and why.
func (r TripRule) trips(w Window) (bool, Reason) {
	if w.TrailingMisses() >= r.ConsecutiveMisses {
		return true, ReasonConsecutiveMisses
	}
	samples, misses := w.Last(r.WindowSamples)
	// misses/samples > threshold/100, in integers.
	if samples >= r.MinSamples && uint64(misses)*100 > uint64(r.ThresholdPct)*uint64(samples) {
		return true, ReasonMissRate
	}
	return false, ReasonNone
}
