package scratch

import (
	"sync"
	"testing"
)

// TestTakeIsZeroedAndNeverShared: a buffer comes back zeroed whatever
// was written into it, is reused once given back, and is never handed to
// two holders at once (the second gets its own).
func TestTakeIsZeroedAndNeverShared(t *testing.T) {
	var k Kept[uint64]
	a, release := k.Take(8)
	for i := range a {
		a[i] = uint64(i + 1)
	}
	b, releaseB := k.Take(8)
	if &a[0] == &b[0] {
		t.Fatal("one buffer handed to two holders")
	}
	releaseB()
	release()
	c, releaseC := k.Take(4)
	defer releaseC()
	if &c[0] != &a[0] {
		t.Fatal("the buffer given back was not reused")
	}
	for i, x := range c {
		if x != 0 {
			t.Fatalf("slot %d holds %d from the last holder", i, x)
		}
	}
	if d, _ := k.Take(-1); len(d) != 0 {
		t.Fatal("a negative size gave a buffer")
	}
}

// TestConcurrentHoldersNeverMeet: goroutines taking and writing their own
// marks never see another's.
func TestConcurrentHoldersNeverMeet(t *testing.T) {
	var k Kept[int]
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 2000 {
				s, release := k.Take(64)
				for i := range s {
					if s[i] != 0 {
						t.Errorf("goroutine %d found %d", g, s[i])
					}
					s[i] = g + 1
				}
				release()
			}
		}()
	}
	wg.Wait()
}
