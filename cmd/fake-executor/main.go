// Command fake-executor plays inference executor nodes for the localnet:
// each serves /health and /v1/inference and can be made to go dark, hang
// or fail through a control API on the same listener. One process serves
// one executor or a fleet of them on a contiguous range of ports, with a
// bulk control switching any set at once. It is a test fixture.
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
	"strconv"
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
	listen := fs.String("listen", "127.0.0.1:8080", "listen address (host:port); with -count N, executor j listens on port+j")
	count := fs.Int("count", 1, fmt.Sprintf("executors to serve, 1..%d, on consecutive ports", maxFleet))
	name := fs.String("name", "", "label for logs (default: the listen address); with -count N > 1, executor j is <name>j")
	model := fs.String("model", "llama-7b", "model name every executor serves")
	latency := fs.Duration("latency", 50*time.Millisecond, "simulated inference latency")
	failPct := fs.Int("fail-pct", 0, "percent (0..100) of inferences failing with 503 while up")
	spare := fs.Bool("spare-canaries", false, "serve canaries (inference ids not shaped like the load driver's) whatever -fail-pct says")
	seed := fs.Uint64("seed", 1, "seed of the failure-injection PCG source (executor j: seed+j)")
	public := fs.Bool("allow-non-loopback", false, "listen on a host other than loopback (the control endpoints have no authentication)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments: %v", fs.Args())
	}
	host, portStr, err := net.SplitHostPort(*listen)
	if err != nil {
		return fmt.Errorf("-listen: %w", err)
	}
	if err := checkLoopback(host, *public); err != nil {
		return err
	}
	port, err := strconv.Atoi(portStr)
	if err != nil {
		return fmt.Errorf("-listen: port %q is not a number", portStr)
	}
	if *count > 1 && port == 0 {
		return errors.New("-count > 1 needs a base port in -listen, not 0")
	}
	if *name == "" {
		*name = *listen
		if *count > 1 {
			*name = "exec"
		}
	}
	flags := log.LstdFlags | log.Lmicroseconds
	fleet, err := NewFleet(Config{Name: *name, Model: *model, Latency: *latency, FailPct: *failPct, SpareCanaries: *spare, Seed: *seed},
		*count, func(n string) *log.Logger { return log.New(os.Stderr, "fake-executor["+n+"] ", flags) })
	if err != nil {
		return err
	}
	logger := log.New(os.Stderr, "fake-executor["+*name+"] ", flags)

	var lns []net.Listener
	if *count == 1 {
		ln, err := net.Listen("tcp", *listen) // port 0 allowed: one executor
		if err != nil {
			return err
		}
		lns = []net.Listener{ln}
	} else if lns, err = fleet.Listen(host, port); err != nil {
		return err
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	errc := fleet.Serve(lns, logger)
	if *count == 1 {
		logger.Printf("listening on %s: model=%s latency=%s fail_pct=%d spare_canaries=%v seed=%d mode=up",
			lns[0].Addr(), *model, *latency, *failPct, *spare, *seed)
	} else {
		logger.Printf("serving %d executors %s0..%s%d on %s ports %d..%d: model=%s latency=%s fail_pct=%d spare_canaries=%v seeds %d.. mode=up",
			*count, *name, *name, *count-1, host, port, port+*count-1, *model, *latency, *failPct, *spare, *seed)
	}

	select {
	case err := <-errc:
		fleet.Close()
		return err
	case <-ctx.Done():
	}
	stop() // a second signal kills the process the default way
	logger.Printf("signal received, shutting down")
	sctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	if err := fleet.Shutdown(sctx); err != nil {
		fleet.Close()
		return fmt.Errorf("shutdown: %w", err)
	}
	if err := <-errc; err != nil {
		return err
	}
	logger.Printf("stopped")
	return nil
}

// newHTTPServer serves h for srv in an http.Server whose Shutdown releases
// the requests held in hang mode or in the latency wait.
func newHTTPServer(srv *Server, h http.Handler, logger *log.Logger) *http.Server {
	hs := &http.Server{
		Handler:           h,
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

// checkLoopback refuses a listen host that is not a loopback address unless
// allowed: anyone who reaches the control endpoints can take every executor
// dark.
func checkLoopback(host string, allowed bool) error {
	if allowed || host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	return fmt.Errorf("-listen host %q is not loopback; the control endpoints are unauthenticated (pass -allow-non-loopback to listen there anyway)", host)
}
