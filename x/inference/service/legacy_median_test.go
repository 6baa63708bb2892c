package service

// The median as it was before the counting sort (commit 2d859e8), copied
// verbatim but for the names (legacy*): the reference the new tally must
// equal byte for byte (differential_test.go), and the baseline of
// BenchmarkMedian. It sorts every rated report by (executor, rate) with
// slices.SortStableFunc.

import (
	"errors"
	"fmt"
	"math"
	"slices"
)

// legacyMedian computes the attested service rate of each of the n executors: the
// power-weighted lower median of the rates reported for it (the smallest
// rate m such that the reports at or below m hold at least half the
// reporting power), when the validators reporting a rate for it hold more
// than 2/3 of total, the power of the whole commit (every validator of the
// set, absent or abstaining ones included); Unknown otherwise.
//
// Why it is safe: validators that reported hold more than 2/3 of total and
// Byzantine ones less than 1/3, so honest validators hold more than half of
// the reporting power; the median then lies between the lowest and the
// highest rate an honest validator reported, whatever the others say.
//
// Every vote must encode exactly n reports and the votes' power must not
// exceed total; any other input is an error, never a panic.
func legacyMedian(votes []Vote, total uint64, n int) ([]Report, error) {
	t, err := legacyTallyVotes(votes, total, n)
	if err != nil {
		return nil, err
	}
	out := make([]Report, n)
	e := 0 // t.rated is sorted by executor, then rate
	for i := range out {
		known := t.reporting - t.unknown[i]
		start := e
		for e < len(t.rated) && t.rated[e].index == i {
			e++
		}
		out[i] = t.median(i, known, t.rated[start:e])
	}
	return out, nil
}

// legacyEncoded is Encode(legacyMedian(votes, total, n)): the rates as a bundle
// carries them.
func legacyEncoded(votes []Vote, total uint64, n int) ([]byte, error) {
	rates, err := legacyMedian(votes, total, n)
	if err != nil {
		return nil, err
	}
	return Encode(rates)
}

// legacyTally is the reports of a commit: every vote with a list credits its
// power to every executor at 0% (reporting) and lists its exceptions.
type legacyTally struct {
	total     uint64
	reporting uint64        // the power of the votes that carry a list
	unknown   []uint64      // per executor: power of those lists that say Unknown
	rated     []legacyEntry // rates above 0%, sorted by (index, rate)
	ratedSum  []uint64      // per executor: power behind rated entries
}

type legacyEntry struct {
	index int
	rate  Report
	power uint64
}

func legacyTallyVotes(votes []Vote, total uint64, n int) (legacyTally, error) {
	if n < 0 {
		return legacyTally{}, fmt.Errorf("%w: %d executors", ErrLength, n)
	}
	if total > math.MaxUint64/3 {
		return legacyTally{}, errors.New("total power overflows")
	}
	t := legacyTally{total: total, unknown: make([]uint64, n), ratedSum: make([]uint64, n)}
	var sum uint64
	for v, vote := range votes {
		if vote.Power < 0 {
			return legacyTally{}, fmt.Errorf("vote %d: negative power %d", v, vote.Power)
		}
		p := uint64(vote.Power)
		if sum += p; sum > total {
			return legacyTally{}, fmt.Errorf("vote %d: the votes hold more than the commit's power %d", v, total)
		}
		if len(vote.Reports) == 0 {
			continue
		}
		if err := Check(vote.Reports, n); err != nil {
			return legacyTally{}, fmt.Errorf("vote %d: %w", v, err)
		}
		t.reporting += p
		// Checked above: cannot fail.
		_ = Each(vote.Reports, n, func(i int, r Report) {
			if r == Unknown {
				t.unknown[i] += p
				return
			}
			t.rated = append(t.rated, legacyEntry{index: i, rate: r, power: p})
			t.ratedSum[i] += p
		})
	}
	slices.SortStableFunc(t.rated, func(a, b legacyEntry) int {
		if a.index != b.index {
			return a.index - b.index
		}
		return int(a.rate) - int(b.rate)
	})
	return t, nil
}

// median is executor i's attested rate, from the power known reporting a
// rate for it and its rated entries in increasing rate order.
func (t *legacyTally) median(i int, known uint64, rated []legacyEntry) Report {
	if known == 0 || 3*known <= 2*t.total {
		return Unknown
	}
	cum := known - t.ratedSum[i] // the power at 0%
	if 2*cum >= known {
		return 0
	}
	for _, e := range rated {
		if cum += e.power; 2*cum >= known {
			return e.rate
		}
	}
	return Unknown // unreachable: the rated entries sum to known - cum
}

// legacySuspected reports, for each of the n executors, whether the validators
// that reported a rate above 0% for it hold more than 1/3 of total (the
// whole commit's power). An honest monitor reports above 0% only on
// evidence its own test found conclusive (its CUSUM alarmed), so this is
// a hint that some validator sees the executor failing, and that
// validators below 1/3 of the power cannot raise alone: at least one
// honest validator is among those behind it. It decides nothing on
// chain; monitors read it to canary the executor harder at once, so the
// median sees what the first validators saw sooner.
//
// A vote that rates more than maxRated executors above 0% counts for
// none of them (maxRated < 0: no limit): an honest monitor alarms on a
// few executors at a time, while a lie that rates every executor would
// otherwise need only one honest or flaky report beside it.
//
// Same input rules as Median.
func legacySuspected(votes []Vote, total uint64, n, maxRated int) ([]bool, error) {
	if maxRated >= 0 {
		kept := make([]Vote, 0, len(votes))
		for _, v := range votes {
			rated := 0
			if err := Each(v.Reports, n, func(_ int, r Report) {
				if r != Unknown && r > 0 {
					rated++
				}
			}); err != nil {
				return nil, err
			}
			if rated > maxRated {
				v.Reports = nil // its power still counts in total
			}
			kept = append(kept, v)
		}
		votes = kept
	}
	t, err := legacyTallyVotes(votes, total, n)
	if err != nil {
		return nil, err
	}
	out := make([]bool, n)
	for i := range out {
		out[i] = 3*t.ratedSum[i] > t.total
	}
	return out, nil
}
