package routes

import (
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"cosmossdk.io/log/v2"

	sdk "github.com/cosmos/cosmos-sdk/types"
)

// TestRouteWarmerRunsAfterCommitsAndSurvivesPanics: each commit wakes one
// warm-up, commits during one are coalesced, and a panicking build (a fault
// on the query path) neither crashes the node nor stops later warm-ups.
func TestRouteWarmerRunsAfterCommitsAndSurvivesPanics(t *testing.T) {
	var calls atomic.Int32
	release := make(chan struct{})
	w := NewWarmer(func() error {
		switch calls.Add(1) {
		case 1:
			<-release // busy while commits pile up
			return nil
		case 2:
			panic("store fault")
		default:
			return errors.New("no state yet")
		}
	}, log.NewNopLogger())
	defer w.Stop()

	waitFor := func(n int32) {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for calls.Load() < n {
			if time.Now().After(deadline) {
				t.Fatalf("%d warm-ups, want %d", calls.Load(), n)
			}
			time.Sleep(time.Millisecond)
		}
	}
	w.Committed(sdk.Context{})
	waitFor(1)
	for range 5 { // while the first runs: one more wake-up, not five
		w.Committed(sdk.Context{})
	}
	close(release)
	waitFor(2) // the coalesced one, which panics
	w.Committed(sdk.Context{})
	waitFor(3) // still running after the panic
	time.Sleep(20 * time.Millisecond)
	if got := calls.Load(); got != 3 {
		t.Fatalf("%d warm-ups for 3 wake-ups", got)
	}
}

// TestRouteWarmerStopWaits: Stop returns only once the goroutine is gone,
// and a commit after Stop does not block.
func TestRouteWarmerStopWaits(t *testing.T) {
	w := NewWarmer(func() error { return nil }, log.NewNopLogger())
	w.Stop()
	select {
	case <-w.done:
	default:
		t.Fatal("Stop returned before the goroutine ended")
	}
	w.Committed(sdk.Context{})
	w.Committed(sdk.Context{})
}
