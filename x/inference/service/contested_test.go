package service

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// contestedCount is how many executors the median must count the rates of.
func contestedCount(t *testing.T, votes []Vote, total uint64, n int) int {
	t.Helper()
	tl, err := tallyVotes(votes, total, n)
	if err != nil {
		t.Fatal(err)
	}
	defer tl.release()
	count := 0
	for i := range n {
		if _, settled := tl.settled(i); !settled {
			count++
		}
	}
	return count
}

// Attack: validators coordinate their lists to contest as many executors
// as they can, so that the median's work grows with the group (a slower
// block for every node). Three equal validators, each pair of them rating
// its own 128 executors above 0%: every rated executor has two thirds of
// the power behind a rate, 384 are contested, whether the group holds
// 1,000 executors or 50,000. Whatever the lists, fewer than 3 x
// MaxExceptions can be: each needs rates from more than a third of the
// power, and a list rates at most MaxExceptions. The rates equal the
// legacy median's.
func TestContestedExecutorsStayFewWhateverTheGroupSize(t *testing.T) {
	for _, n := range []int{1000, 50_000} {
		lists := make([][]Report, 3)
		for v := range lists {
			lists[v] = make([]Report, n)
		}
		for pair := range 3 {
			a, b := pair, (pair+1)%3
			for k := range MaxExceptions / 2 {
				e := (pair*MaxExceptions/2 + k) * (n / 400)
				lists[a][e], lists[b][e] = Report(1+k%100), MaxRate
			}
		}
		votes := encodeAll(t, lists, []uint64{1, 1, 1})
		if got := contestedCount(t, votes, 3, n); got != 3*MaxExceptions/2 {
			t.Fatalf("n=%d: %d contested, want %d", n, got, 3*MaxExceptions/2)
		}
		got, err := Median(votes, 3, n)
		want, wantErr := legacyMedian(votes, 3, n)
		if err != nil || wantErr != nil || !slices.Equal(got, want) {
			t.Fatalf("n=%d: Median differs from legacy (%v, %v)", n, err, wantErr)
		}
	}
	// Random coordinated commits: validators rating (or not knowing) up to
	// MaxExceptions executors of a small shared pool, absent power beside.
	rng := rand.New(rand.NewPCG(7, 17))
	for trial := range 300 {
		n := 2000
		vals := 3 + rng.IntN(20)
		pool := 1 + rng.IntN(3*MaxExceptions)
		lists := make([][]Report, vals)
		powers := make([]uint64, vals)
		var sum uint64
		for v := range lists {
			powers[v] = 1 + rng.Uint64N(10)
			sum += powers[v]
			lists[v] = make([]Report, n)
			for _, e := range rng.Perm(pool)[:min(pool, MaxExceptions)] {
				lists[v][e] = Report(1 + rng.IntN(int(MaxRate)))
				if rng.IntN(10) == 0 {
					lists[v][e] = Unknown
				}
			}
		}
		total := sum + rng.Uint64N(sum/3+1)
		votes := encodeAll(t, lists, powers)
		if got := contestedCount(t, votes, total, n); got >= 3*MaxExceptions {
			t.Fatalf("trial %d: %d contested executors", trial, got)
		}
		got, err := Median(votes, total, n)
		want, wantErr := legacyMedian(votes, total, n)
		if err != nil || wantErr != nil || !slices.Equal(got, want) {
			t.Fatalf("trial %d: Median differs from legacy (%v, %v)", trial, err, wantErr)
		}
	}
}
