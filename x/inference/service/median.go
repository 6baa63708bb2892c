package service

import (
	"errors"
	"fmt"
	"math"

	"github.com/inferenced/inferenced/x/inference/scratch"
)

// Vote is one validator's valid extension: its power as recorded in the
// verified commit and its encoded service reports (empty: it reports
// nothing, as an abstaining validator or one without canaries).
type Vote struct {
	Power   int64
	Reports []byte
	// Checked is Reports as CheckList accepted them, when the caller has
	// it (ve's check of the extension): the tally then adds its decoded
	// exceptions instead of reading the list again. Ignored unless it was
	// made from these very bytes (not a copy) for the same group size.
	Checked Checked
}

// Median computes the attested service rate of each of the n executors: the
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
func Median(votes []Vote, total uint64, n int) ([]Report, error) {
	t, err := tallyVotes(votes, total, n)
	if err != nil {
		return nil, err
	}
	defer t.release()
	if t.sums == nil {
		return allUnknown(n), nil
	}
	return t.rates(votes)
}

// allUnknown is n Unknown reports: the median of votes without a list.
func allUnknown(n int) []Report {
	out := make([]Report, n)
	for i := range out {
		out[i] = Unknown
	}
	return out
}

// rates is the median of the tallied votes.
func (t *tally) rates(votes []Vote) ([]Report, error) {
	n := len(t.sums)
	// Most executors are settled by the totals alone; only the contested
	// ones need their rates above 0% counted, power per rate.
	out := make([]Report, n)
	contested := 0
	for i := range out {
		var settled bool
		if out[i], settled = t.settled(i); !settled {
			contested++
		}
	}
	if contested > 0 {
		if err := t.rateContested(votes, out, contested); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// rateContested sets the rate of each of the contested executors in out:
// the lists (checked by tallyVotes) are read again, and each rate above 0%
// of a contested executor adds its power to that executor's count of it.
// The work is the lists' and contested x MaxRate, not n x votes.
func (t *tally) rateContested(votes []Vote, out []Report, contested int) error {
	row := make([]int, len(out)) // 1 + the executor's row in powerAt; 0: settled
	powerAt := make([][MaxRate + 1]uint64, 0, contested)
	for i := range row {
		if _, settled := t.settled(i); !settled {
			powerAt = append(powerAt, [MaxRate + 1]uint64{})
			row[i] = len(powerAt)
		}
	}
	for _, vote := range votes {
		if len(vote.Reports) == 0 {
			continue
		}
		p := uint64(vote.Power)
		if err := Each(vote.Reports, len(out), func(i int, r Report) {
			if r.Known() && row[i] > 0 {
				powerAt[row[i]-1][r] += p
			}
		}); err != nil {
			return err // unreachable: tallyVotes checked every list
		}
	}
	for i, k := range row {
		if k > 0 {
			out[i] = t.median(i, &powerAt[k-1])
		}
	}
	return nil
}

// Encoded is Encode(Median(votes, total, n)): the rates as a bundle
// carries them.
func Encoded(votes []Vote, total uint64, n int) ([]byte, error) {
	t, err := tallyVotes(votes, total, n)
	if err != nil {
		return nil, err
	}
	defer t.release()
	if t.sums == nil {
		return nil, nil // Encode of every report Unknown
	}
	if bz, ok := t.encodeSettled(); ok {
		return bz, nil
	}
	rates, err := t.rates(votes)
	if err != nil {
		return nil, err
	}
	return Encode(rates)
}

// encodeSettled is Encode of the median in one pass over the executors,
// without the list of rates, when every executor is settled and at most
// MaxExceptions are Unknown (settled ones are Unknown or 0%, and all
// encode); false otherwise, for Median and Encode to take over.
func (t *tally) encodeSettled() ([]byte, bool) {
	n := len(t.sums)
	out := make([]byte, 1, max(1, MaxLen(n)))
	next, exceptions, known := 0, 0, false
	// Most executors are named by no list: all at 0%, the same rate.
	idle, _ := t.settledSums([2]uint64{})
	for i, s := range t.sums {
		r, settled := idle, true
		if s != [2]uint64{} {
			r, settled = t.settledSums(s)
		}
		switch {
		case !settled:
			return nil, false
		case r == 0:
			known = true
			continue
		}
		if exceptions++; exceptions > MaxExceptions {
			return nil, false
		}
		out = appendException(out, i-next, r)
		next = i + 1
	}
	if !known {
		return nil, true // Encode's all-unknown list: the empty string
	}
	return out, true
}

// tally is the reports of a commit: every vote with a list credits its
// power to every executor at 0% (reporting) and debits its exceptions.
type tally struct {
	total     uint64
	reporting uint64 // the power of the votes that carry a list
	// per executor: [0] the power of those lists that rate it above 0%,
	// [1] of those that say Unknown (scan's order)
	sums    [][2]uint64
	release func() // gives the sums back (kept)
}

// kept is the sums' buffer, kept from one tally to the next (scratch).
var kept scratch.Kept[[2]uint64]

func (t *tally) ratedSum(i int) uint64 { return t.sums[i][0] }
func (t *tally) unknown(i int) uint64  { return t.sums[i][1] }

func tallyVotes(votes []Vote, total uint64, n int) (tally, error) {
	if n < 0 {
		return tally{}, fmt.Errorf("%w: %d executors", ErrLength, n)
	}
	if total > math.MaxUint64/3 {
		return tally{}, errors.New("total power overflows")
	}
	// The sums are taken at the first list: a commit whose validators all
	// abstain on service (each sees more executors unknown than a list
	// carries, as when a third of the group is dark) tallies nothing.
	t := tally{total: total, release: func() {}}
	var sum uint64
	for v, vote := range votes {
		if vote.Power < 0 {
			t.release()
			return tally{}, fmt.Errorf("vote %d: negative power %d", v, vote.Power)
		}
		p := uint64(vote.Power)
		if sum += p; sum > total {
			t.release()
			return tally{}, fmt.Errorf("vote %d: the votes hold more than the commit's power %d", v, total)
		}
		if len(vote.Reports) == 0 {
			continue
		}
		// The list is read once and checked as it is tallied (Check
		// refuses what scan refuses, and a list of only unknowns); a bad
		// one fails the whole tally, with Check's error.
		t.reporting += p
		if t.sums == nil {
			t.sums, t.release = kept.Take(n)
		}
		if vote.Checked.Decodes(vote.Reports, n) {
			t.addChecked(vote.Checked, p)
			continue
		}
		if unknowns, _, ok := scan(vote.Reports, n, sink{sums: t.sums, p: p}); !ok || unknowns == n {
			t.release()
			return tally{}, fmt.Errorf("vote %d: %w", v, Check(vote.Reports, n))
		}
	}
	return t, nil
}

// settled is executor i's rate when the rates above 0% cannot change it,
// and true: Unknown when the validators reporting a rate for it hold 2/3
// of total or less, 0% when the reports at 0% hold at least half of the
// reporting power. Otherwise (false) it is contested, and the rates
// decide. At most 3 x MaxExceptions executors are contested, whatever n:
// each needs rates above 0% from more than a third of total, and a list
// rates at most MaxExceptions.
func (t *tally) settled(i int) (Report, bool) { return t.settledSums(t.sums[i]) }

// settledSums is settled for an executor with sums s (rated, unknown).
func (t *tally) settledSums(s [2]uint64) (Report, bool) {
	known := t.reporting - s[1]
	switch {
	case known == 0 || 3*known <= 2*t.total:
		return Unknown, true
	case 2*(known-s[0]) >= known:
		return 0, true
	}
	return 0, false
}

// median is contested executor i's attested rate, from the power behind
// each rate above 0%: the lowest rate at or below which the reports hold
// half the reporting power.
func (t *tally) median(i int, powerAt *[MaxRate + 1]uint64) Report {
	known := t.reporting - t.unknown(i)
	cum := known - t.ratedSum(i) // the power at 0%
	for r := Report(1); r <= MaxRate; r++ {
		if cum += powerAt[r]; 2*cum >= known {
			return r
		}
	}
	return Unknown // unreachable: the rates above 0% sum to ratedSum[i]
}

// PeerMedian is the lower median, over the executors of a list of n
// attested service rates (Encode) that have a rate, of those
// rates, and whether any has one. Executors, not validators, are the
// peers: a rise every validator sees on every executor (a network-wide
// fault, or the validators' own) raises it alike for all.
func PeerMedian(rates []byte, n int) (Report, bool, error) {
	var counts [MaxRate + 1]int
	listed, unknown := 0, 0
	err := Each(rates, n, func(_ int, r Report) {
		listed++
		if r == Unknown {
			unknown++
			return
		}
		counts[r]++
	})
	if err != nil {
		return 0, false, err
	}
	if len(rates) == 0 {
		return 0, false, nil
	}
	counts[0] += n - listed
	known := n - unknown
	if known == 0 {
		return 0, false, nil
	}
	return lowerMedian(&counts, known), true, nil
}

// lowerMedian is the smallest rate at or below which at least half of the
// known rates lie, given how many there are of each (known > 0, the sum
// of counts).
func lowerMedian(counts *[MaxRate + 1]int, known int) Report {
	cum := 0
	for r, c := range counts {
		if cum += c; 2*cum >= known {
			return Report(r)
		}
	}
	return MaxRate // unreachable: the counts sum to known
}

// View is one block's attested rates as the breaker reads them: each
// member's rate in group order, and the limits the peers' median sets. A
// rate above Miss is a service miss; at or below OK, a service ok (the
// canaries see the executor serving); in between, no sample, since an ok
// restores an executor and shields it from agents' traffic trips and must
// not be one noisy step under a miss.
type View struct {
	Rates    []Report // nil: no rates this block
	Miss, OK uint64
}

// NewView decodes a block's encoded rates for a group of n once, against
// the peers' median plus excess (a miss) and half of it (an ok).
func NewView(rates []byte, n int, excess uint64) (View, error) {
	if n <= 0 || len(rates) == 0 {
		return View{}, nil
	}
	median, known, err := PeerMedian(rates, n)
	if err != nil || !known {
		return View{}, err
	}
	decoded, err := Decode(rates, n)
	if err != nil {
		return View{}, err
	}
	return View{Rates: decoded, Miss: uint64(median) + excess, OK: uint64(median) + excess/2}, nil
}

// Sample is member i's service sample: whether there is one, and whether
// it is a miss.
func (v View) Sample(i int) (has, miss bool) {
	if i < 0 || i >= len(v.Rates) || !v.Rates[i].Known() {
		return false, false
	}
	r := uint64(v.Rates[i])
	return r > v.Miss || r <= v.OK, r > v.Miss
}

// Suspected reports, for each of the n executors, whether the validators
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
func Suspected(votes []Vote, total uint64, n, maxRated int) ([]bool, error) {
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
	t, err := tallyVotes(votes, total, n)
	if err != nil {
		return nil, err
	}
	defer t.release()
	out := make([]bool, n)
	for i := 0; t.sums != nil && i < n; i++ {
		out[i] = 3*t.ratedSum(i) > t.total
	}
	return out, nil
}
