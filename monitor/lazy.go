package monitor

import (
	"sync"

	"github.com/inferenced/inferenced/x/inference/service"
	"github.com/inferenced/inferenced/x/inference/verdict"
)

// Lazy starts a monitor on its first snapshot or service report, that is
// on the node's first vote extension, so that it probes only in a node
// that votes (not in CLI commands that build the app), and stops it on
// Stop.
type Lazy struct {
	m       *Monitor
	once    sync.Once
	mu      sync.Mutex
	started bool
}

// NewLazy wraps m, which must not have been started.
func NewLazy(m *Monitor) *Lazy { return &Lazy{m: m} }

// start starts the monitor the first time it is called.
func (l *Lazy) start() {
	l.once.Do(func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		l.m.Start()
		l.started = true
	})
}

// Snapshot starts the monitor the first time, then is m.Snapshot.
func (l *Lazy) Snapshot(epoch uint64, n int) ([]verdict.Verdict, error) {
	l.start()
	return l.m.Snapshot(epoch, n)
}

// Service starts the monitor the first time (the same once as Snapshot),
// then is m.Service.
func (l *Lazy) Service(epoch uint64, n int) ([]service.Report, error) {
	l.start()
	return l.m.Service(epoch, n)
}

// Stop stops the monitor if a snapshot or service report has started it.
func (l *Lazy) Stop() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.started {
		l.m.Stop()
		l.started = false
	}
}
