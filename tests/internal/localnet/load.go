package localnet

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"
)

// Load is the load driver (cmd/loadgen) running against a network.
type Load struct {
	n      *Net
	events string
	out    bytes.Buffer
	cancel context.CancelFunc
	done   chan error
}

// LoadEvent is one request of the load driver, from its events file.
type LoadEvent struct {
	Height   int64  `json:"height"` // the height of the state the draw read
	ID       string `json:"inference_id"`
	Executor string `json:"executor"`
	Outcome  string `json:"outcome"`
	Probe    bool   `json:"probe"`
}

// StartLoad runs loadgen at rate requests per block until Stop (or, at
// the latest, until timeout).
func (n *Net) StartLoad(rate int, run string, timeout time.Duration) *Load {
	n.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	l := &Load{n: n, events: filepath.Join(n.Home, run+"-events.jsonl"), cancel: cancel, done: make(chan error, 1)}
	cmd := exec.CommandContext(ctx, filepath.Join(n.Bins, "loadgen"), "-grpc", n.GRPCAddr(), "-keyring-dir", n.KeysDir,
		"-rate", strconv.Itoa(rate), "-run", run, "-events", l.events, "-quiet", "-exec-timeout", "1s")
	cmd.Stdout, cmd.Stderr = &l.out, &l.out
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) } // let it flush its events
	cmd.WaitDelay = 10 * time.Second
	if err := cmd.Start(); err != nil {
		cancel()
		n.t.Fatal(err)
	}
	go func() { l.done <- cmd.Wait() }()
	n.t.Cleanup(l.Stop)
	return l
}

// Stop interrupts the load driver and waits for it (idempotent).
func (l *Load) Stop() {
	if l.cancel == nil {
		return
	}
	l.cancel()
	<-l.done
	l.cancel = nil
}

// Output is what the load driver printed.
func (l *Load) Output() string { return l.out.String() }

// Events reads every request the load driver recorded so far.
func (l *Load) Events() []LoadEvent {
	l.n.t.Helper()
	f, err := os.Open(l.events)
	if err != nil {
		l.n.t.Fatal(err)
	}
	defer f.Close()
	var out []LoadEvent
	scanner := bufio.NewScanner(f)
	for scanner.Scan() {
		var ev LoadEvent
		if err := json.Unmarshal(scanner.Bytes(), &ev); err != nil {
			continue // a line being written when read
		}
		out = append(out, ev)
	}
	return out
}
