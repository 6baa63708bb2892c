package main

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net"
	"net/http"
	"strconv"
	"sync"
)

// maxFleet bounds the executors one process serves: each holds a listener
// (one file descriptor) and an accept goroutine.
const maxFleet = 10000

// Fleet is size fake executors in one process. Executor j has its own
// state (mode, failure percentage, seed, counters) and its own listener;
// every listener also serves the fleet's bulk control, which switches any
// set of executors at once.
type Fleet struct {
	servers []*Server
	http    []*http.Server
}

// NewFleet builds size executors from base: executor j is seeded with
// base.Seed+j and named base.Name, or base.Name followed by j in a fleet of
// more than one. logger returns the logger of the executor of a name.
func NewFleet(base Config, size int, logger func(name string) *log.Logger) (*Fleet, error) {
	if size < 1 || size > maxFleet {
		return nil, fmt.Errorf("fleet size must be in 1..%d, got %d", maxFleet, size)
	}
	f := &Fleet{}
	for j := range size {
		cfg := base
		cfg.Seed = base.Seed + uint64(j)
		if size > 1 {
			cfg.Name = base.Name + strconv.Itoa(j)
		}
		s, err := NewServer(cfg, logger(cfg.Name))
		if err != nil {
			return nil, err
		}
		f.servers = append(f.servers, s)
	}
	return f, nil
}

// Size is the number of executors.
func (f *Fleet) Size() int { return len(f.servers) }

// Executor is executor j.
func (f *Fleet) Executor(j int) *Server { return f.servers[j] }

// Handler is executor j's handler: its own endpoints and control API, and
// the fleet's.
func (f *Fleet) Handler(j int) http.Handler {
	mux := http.NewServeMux()
	f.servers[j].routes(mux)
	mux.HandleFunc("POST /control/bulk", f.handleBulk)
	mux.HandleFunc("GET /control/fleet", f.handleFleet)
	return mux
}

// Listen opens executor j's listener on host at basePort+j, for every j:
// the fleet's ports are one contiguous range. On any failure the listeners
// already open are closed.
func (f *Fleet) Listen(host string, basePort int) ([]net.Listener, error) {
	if basePort < 1 || basePort+f.Size()-1 > 65535 {
		return nil, fmt.Errorf("ports %d..%d: not a valid range", basePort, basePort+f.Size()-1)
	}
	lns := make([]net.Listener, 0, f.Size())
	for j := range f.Size() {
		ln, err := net.Listen("tcp", net.JoinHostPort(host, strconv.Itoa(basePort+j)))
		if err != nil {
			for _, l := range lns {
				_ = l.Close()
			}
			return nil, fmt.Errorf("executor %d: %w", j, err)
		}
		lns = append(lns, ln)
	}
	return lns, nil
}

// Serve serves executor j on lns[j] until Shutdown or Close. The returned
// channel receives the first error a server ends with other than
// http.ErrServerClosed, and is closed once every server has ended.
func (f *Fleet) Serve(lns []net.Listener, errLog *log.Logger) <-chan error {
	errc := make(chan error, 1)
	var wg sync.WaitGroup
	for j, ln := range lns {
		hs := newHTTPServer(f.servers[j], f.Handler(j), errLog)
		f.http = append(f.http, hs)
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := hs.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
				select {
				case errc <- fmt.Errorf("executor %d: %w", j, err):
				default:
				}
			}
		}()
	}
	go func() { wg.Wait(); close(errc) }()
	return errc
}

// Shutdown shuts every server down at once (each releases its held
// requests) and waits for them, at most until ctx ends.
func (f *Fleet) Shutdown(ctx context.Context) error {
	errs := make([]error, len(f.http))
	var wg sync.WaitGroup
	for k, hs := range f.http {
		wg.Add(1)
		go func() { defer wg.Done(); errs[k] = hs.Shutdown(ctx) }()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// Close closes every server at once, dropping their connections.
func (f *Fleet) Close() {
	for _, hs := range f.http {
		_ = hs.Close()
	}
}
