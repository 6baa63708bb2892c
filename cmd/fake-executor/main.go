// Command fake-executor plays an inference executor node for the localnet:
// it serves /health and /v1/inference and can be made to go dark, hang or
// fail through a control API on the same listener. It is a test fixture.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"
)

const shutdownTimeout = 5 * time.Second

func main() {
	if err := run(os.Args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return
		}
		fmt.Fprintln(os.Stderr, "fake-executor:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("fake-executor", flag.ContinueOnError)
	listen := fs.String("listen", "127.0.0.1:8080", "listen address (host:port)")
	name := fs.String("name", "", "label for logs (default: the listen address)")
	model := fs.String("model", "llama-7b", "model name this executor serves")
	latency := fs.Duration("latency", 50*time.Millisecond, "simulated inference latency")
	failPct := fs.Int("fail-pct", 0, "percent (0..100) of inferences failing with 503 while up")
	seed := fs.Uint64("seed", 1, "seed of the failure-injection PCG source")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments: %v", fs.Args())
	}
	if *name == "" {
		*name = *listen
	}

	logger := log.New(os.Stderr, "fake-executor["+*name+"] ", log.LstdFlags|log.Lmicroseconds)
	srv, err := NewServer(Config{
		Name:    *name,
		Model:   *model,
		Latency: *latency,
		FailPct: *failPct,
		Seed:    *seed,
	}, logger)
	if err != nil {
		return err
	}

	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		return err
	}
	hs := newHTTPServer(srv, logger)

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	logger.Printf("listening on %s: model=%s latency=%s fail_pct=%d seed=%d mode=up",
		ln.Addr(), *model, *latency, *failPct, *seed)

	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	stop() // a second signal kills the process the default way
	logger.Printf("signal received, shutting down")
	sctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil {
		_ = hs.Close()
		return fmt.Errorf("shutdown: %w", err)
	}
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	logger.Printf("stopped")
	return nil
}

// newHTTPServer wraps srv in an http.Server whose Shutdown releases the
// requests held in hang mode or in the latency wait.
func newHTTPServer(srv *Server, logger *log.Logger) *http.Server {
	hs := &http.Server{
		Handler:           srv.Handler(),
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		IdleTimeout:       60 * time.Second,
		ErrorLog:          logger,
		// No WriteTimeout: hang mode holds requests (bounded by MaxHang).
	}
	// Shutdown waits for active requests to finish; release the held ones.
	hs.RegisterOnShutdown(srv.State().Stop)
	return hs
}
