package routes

import (
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func key(h int64) heightKey { return heightKey{Height: h} }

func value(v int) func(int, bool) (int, error) { return func(int, bool) (int, error) { return v, nil } }

// TestCacheKeepsOneValuePerKey: a second Get is served without a build,
// and another height is another key.
func TestCacheKeepsOneValuePerKey(t *testing.T) {
	c := newCache[int](4)
	builds := 0
	build := func(int, bool) (int, error) { builds++; return builds, nil }
	for range 3 {
		if v, err := c.Get(key(5), build); err != nil || v != 1 {
			t.Fatalf("got %d, %v", v, err)
		}
	}
	if v, _ := c.Get(key(6), build); v != 2 {
		t.Fatalf("another height was served the old value %d", v)
	}
}

// TestCacheOldHeightsCannotEvictTheTip: the attack is a flood of queries at
// old heights, which would make every query at the tip rebuild. When full,
// the lowest height is evicted, and a height below everything kept is built
// for its caller but not kept.
func TestCacheOldHeightsCannotEvictTheTip(t *testing.T) {
	c := newCache[int](2)
	mustGet := func(h int64, v int) int {
		got, err := c.Get(key(h), value(v))
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	mustGet(10, 10)
	mustGet(11, 11)
	if _, err := c.Get(key(3), value(3)); !errors.Is(err, errNotKept) || c.Len() != 2 {
		t.Fatalf("old height: %v with %d kept", err, c.Len())
	}
	if got := mustGet(10, -1); got != 10 {
		t.Fatalf("the tip was evicted by an old height: got %d", got)
	}
	mustGet(12, 12) // evicts 10, the lowest
	if _, err := c.Get(key(10), value(-10)); !errors.Is(err, errNotKept) {
		t.Fatalf("10 should have been evicted and now be below the kept: %v", err)
	}
}

// TestCacheFailedBuildIsNotKept: an error or a panic (a query out of gas)
// leaves nothing behind, and the next caller builds again.
func TestCacheFailedBuildIsNotKept(t *testing.T) {
	c := newCache[int](4)
	if _, err := c.Get(key(1), func(int, bool) (int, error) { return 0, errors.New("store fault") }); err == nil {
		t.Fatal("error not returned")
	}
	func() {
		defer func() { _ = recover() }()
		_, _ = c.Get(key(1), func(int, bool) (int, error) { panic("out of gas") })
	}()
	if c.Len() != 0 {
		t.Fatalf("%d failed builds kept", c.Len())
	}
	if v, err := c.Get(key(1), value(7)); err != nil || v != 7 {
		t.Fatalf("rebuild after failures: %d, %v", v, err)
	}
}

// TestCacheWaitersShareAFailure: callers waiting on a build that fails get
// its failure at once; they do not rebuild one after another (a repeatable
// fault would otherwise cost one build per waiter, in series).
func TestCacheWaitersShareAFailure(t *testing.T) {
	c := newCache[int](4)
	var builds, entered atomic.Int32
	release := make(chan struct{})
	fault := errors.New("store fault")
	build := func(int, bool) (int, error) {
		if builds.Add(1) > 1 {
			return 42, nil // a rebuild would succeed: waiters must not get here
		}
		<-release
		return 0, fault
	}
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			entered.Add(1)
			_, errs[i] = c.Get(key(9), build)
		}()
	}
	for builds.Load() == 0 || entered.Load() < int32(len(errs)) {
		runtime.Gosched()
	}
	time.Sleep(20 * time.Millisecond) // let every caller reach the slot
	close(release)
	wg.Wait()
	for i, err := range errs {
		if !errors.Is(err, fault) {
			t.Fatalf("caller %d: %v, want the build's failure", i, err)
		}
	}
	if n := builds.Load(); n != 1 || c.Len() != 0 {
		t.Fatalf("%d builds, %d kept", n, c.Len())
	}
}

// TestCacheBaseIsTheHighestBuilt: a build is offered the value of the
// highest height built, to reuse what it can.
func TestCacheBaseIsTheHighestBuilt(t *testing.T) {
	c := newCache[int](4)
	if _, err := c.Get(key(1), func(_ int, ok bool) (int, error) {
		if ok {
			t.Error("base offered from an empty cache")
		}
		return 1, nil
	}); err != nil {
		t.Fatal(err)
	}
	_, _ = c.Get(key(3), value(3))
	_, _ = c.Get(key(2), func(base int, ok bool) (int, error) {
		if !ok || base != 3 {
			t.Errorf("base %d (%v), want 3", base, ok)
		}
		return 2, nil
	})
}

// TestCacheConcurrentCallersShareOneBuild: the attack is many queries at a
// new height at once; one builds, the others wait for its value (run with
// -race).
func TestCacheConcurrentCallersShareOneBuild(t *testing.T) {
	c := newCache[int](4)
	var builds atomic.Int32
	release := make(chan struct{})
	build := func(int, bool) (int, error) {
		builds.Add(1)
		<-release
		return 42, nil
	}
	var wg sync.WaitGroup
	results := make([]int, 16)
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			v, err := c.Get(key(9), build)
			if err != nil {
				t.Error(err)
			}
			results[i] = v
		}()
	}
	for builds.Load() == 0 { // until one caller is building
		runtime.Gosched()
	}
	close(release)
	wg.Wait()
	if builds.Load() != 1 {
		t.Fatalf("%d builds for one key", builds.Load())
	}
	for _, v := range results {
		if v != 42 {
			t.Fatalf("a caller got %d", v)
		}
	}
}

// TestMemoComputesOnceAndIsBounded: values are kept up to the bound; past
// it they are computed on every call; errors are never kept.
func TestMemoComputesOnceAndIsBounded(t *testing.T) {
	m := newMemo[string, int](1)
	calls := 0
	compute := func() (int, error) { calls++; return calls, nil }
	a1, _ := m.Get("a", compute)
	a2, _ := m.Get("a", compute)
	if a1 != 1 || a2 != 1 {
		t.Fatalf("a computed twice: %d, %d", a1, a2)
	}
	b1, _ := m.Get("b", compute)
	b2, _ := m.Get("b", compute)
	if b1 == b2 {
		t.Fatal("a key past the bound was kept")
	}
	if _, err := m.Get("c", func() (int, error) { return 0, errors.New("fault") }); err == nil {
		t.Fatal("error not returned")
	}
}
