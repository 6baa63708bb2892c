// Package sprt is the slow downtime breaker: Wald's sequential probability
// ratio test over an executor's misses and successes in the current epoch.
//
// H0: the executor misses with probability good (healthy).
// H1: it misses with probability bad (down).
// LLR = misses*ln(bad/good) + successes*ln((1-bad)/(1-good)).
// The executor is found down when LLR >= h. All arithmetic is fixed-point
// decimal, so every validator computes the same answer.
package sprt

import (
	"fmt"

	"cosmossdk.io/math"
)

// Test is a configured SPRT with its per-outcome log-likelihood steps.
type Test struct {
	missStep  math.LegacyDec // ln(bad/good) > 0
	okStep    math.LegacyDec // ln((1-bad)/(1-good)) < 0
	threshold math.LegacyDec
}

// New validates the hypotheses and precomputes the steps.
func New(good, bad, h math.LegacyDec) (Test, error) {
	if err := Validate(good, bad, h); err != nil {
		return Test{}, err
	}
	missStep, err := Ln(bad.Quo(good))
	if err != nil {
		return Test{}, fmt.Errorf("sprt miss step: %w", err)
	}
	okStep, err := Ln(one.Sub(bad).Quo(one.Sub(good)))
	if err != nil {
		return Test{}, fmt.Errorf("sprt success step: %w", err)
	}
	return Test{missStep: missStep, okStep: okStep, threshold: h}, nil
}

// Validate checks 0 < good < bad < 1 and h > 0.
func Validate(good, bad, h math.LegacyDec) error {
	switch {
	case good.IsNil() || bad.IsNil() || h.IsNil():
		return fmt.Errorf("downtime parameters must be set")
	case !good.IsPositive():
		return fmt.Errorf("downtime_good_percentage must be > 0, got %s", good)
	case bad.LTE(good):
		return fmt.Errorf("downtime_bad_percentage (%s) must be > downtime_good_percentage (%s)", bad, good)
	case bad.GTE(one):
		return fmt.Errorf("downtime_bad_percentage must be < 1, got %s", bad)
	case !h.IsPositive():
		return fmt.Errorf("downtime_h_threshold must be > 0, got %s", h)
	}
	return nil
}

// LLR is the log-likelihood ratio of H1 over H0 for the given counts.
func (t Test) LLR(misses, successes uint64) math.LegacyDec {
	m := t.missStep.MulInt(math.NewIntFromUint64(misses))
	s := t.okStep.MulInt(math.NewIntFromUint64(successes))
	return m.Add(s)
}

// IsDown reports whether the evidence accepts H1 (the executor is down).
func (t Test) IsDown(misses, successes uint64) bool {
	return t.LLR(misses, successes).GTE(t.threshold)
}
