package monitor

import (
	"context"
	"reflect"
	"testing"
	"time"

	"cosmossdk.io/log/v2"
)

// The monitor of a node starts on its first vote extension's snapshot,
// never before, and stops on close.
func TestLazyStartsOnTheFirstSnapshot(t *testing.T) {
	calls := 0
	m, err := New(testConfig(), func(ctx context.Context) (Group, error) {
		calls++
		return Group{Epoch: 1}, nil
	}, log.NewNopLogger())
	if err != nil {
		t.Fatal(err)
	}
	l := NewLazy(m)
	l.Stop() // never started: nothing to stop
	time.Sleep(150 * time.Millisecond)
	if calls != 0 {
		t.Fatal("the monitor probed before any snapshot")
	}
	_, _ = l.Snapshot(1, 0) // may come before the first probe round: refused, the caller abstains
	l.Stop()
	if m.cancel == nil {
		t.Fatal("the snapshot did not start the monitor")
	}
	stopped := make(chan struct{})
	go func() { m.done.Wait(); close(stopped) }()
	select {
	case <-stopped:
	case <-time.After(time.Second):
		t.Fatal("Stop left the monitor running")
	}
}

// A service report, like a snapshot, starts the monitor on the first call,
// through the same once: a later snapshot does not start it again.
func TestLazyServiceStartsTheMonitor(t *testing.T) {
	m, err := New(testConfig(), func(context.Context) (Group, error) { return Group{Epoch: 1}, nil }, log.NewNopLogger())
	if err != nil {
		t.Fatal(err)
	}
	l := NewLazy(m)
	t.Cleanup(l.Stop)
	_, _ = l.Service(1, 0)
	if m.cancel == nil {
		t.Fatal("the service report did not start the monitor")
	}
	cancel := m.cancel
	waitFor(t, "the group is read", func() bool { _, err := l.Service(1, 0); return err == nil })
	_, _ = l.Snapshot(1, 0)
	if reflect.ValueOf(m.cancel).Pointer() != reflect.ValueOf(cancel).Pointer() {
		t.Fatal("the snapshot started the monitor a second time")
	}
}
