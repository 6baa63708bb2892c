// Package scratch keeps a working buffer from one block to the next. The
// proposal handlers tally every commit into per-executor sums (a few
// hundred kilobytes at 10,000 executors, two tallies a block); allocating
// them anew each time is garbage the collector then scans for, on a
// node whose heap holds the whole state. A Kept buffer is taken whole or
// not at all: a caller that finds it in use (another goroutine: a CLI, a
// test, a query) gets a fresh one, so no one waits and no two share it.
// It is zeroed when taken, so what a caller computes does not depend on
// who used it before.
package scratch

import "sync"

// Kept is one kept buffer of T; the zero value is ready.
type Kept[T any] struct {
	mu  sync.Mutex
	buf []T
}

// Take returns n zeroed T, and the function that gives them back, to be
// called once nothing of them is in use any more. The kept buffer grows
// to the largest n asked for.
func (k *Kept[T]) Take(n int) (s []T, release func()) {
	if n < 0 || !k.mu.TryLock() {
		return make([]T, max(n, 0)), func() {}
	}
	if cap(k.buf) < n {
		k.buf = make([]T, n)
	}
	s = k.buf[:n]
	clear(s)
	return s, k.mu.Unlock
}
