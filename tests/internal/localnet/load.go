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
	"sync"
	"time"
)

// Load is the load driver (cmd/loadgen) running against a network.
type Load struct {
	n      *Net
	events string
	out    bytes.Buffer
	cmd    *exec.Cmd
	cancel context.CancelFunc
	done   chan struct{} // closed once the driver has exited, err set
	err    error
	stop   sync.Once
}

// LoadEvent is one request of the load driver, from its events file.
type LoadEvent struct {
	Height   int64  `json:"height"` // the height of the state the draw read
	ID       string `json:"inference_id"`
	Executor string `json:"executor"`
	Outcome  string `json:"outcome"`
	Probe    bool   `json:"probe"`
}

// StartLoad runs loadgen at rate requests per block, each given up after
// 1 s without an answer (-exec-timeout), until Stop (or, at the latest,
// until timeout).
func (n *Net) StartLoad(rate int, run string, timeout time.Duration) *Load {
	n.t.Helper()
	return n.startLoad(run, timeout, "-rate", strconv.Itoa(rate), "-exec-timeout", "1s")
}

// RunLoad runs loadgen at rate requests per block for blocks blocks, with
// its default request timeout, and waits until it is done (at most
// timeout); a driver that fails fails the test, showing its output.
func (n *Net) RunLoad(rate, blocks int, run string, timeout time.Duration) *Load {
	n.t.Helper()
	l := n.startLoad(run, timeout, "-rate", strconv.Itoa(rate), "-blocks", strconv.Itoa(blocks))
	<-l.done
	if l.err != nil {
		n.t.Fatalf("loadgen: %v\n%s", l.err, l.Output())
	}
	return l
}

func (n *Net) startLoad(run string, timeout time.Duration, flags ...string) *Load {
	n.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	l := &Load{n: n, events: filepath.Join(n.Home, run+"-events.jsonl"), cancel: cancel, done: make(chan struct{})}
	args := append([]string{"-grpc", n.GRPC(0), "-keyring-dir", n.KeysDir, "-run", run, "-events", l.events, "-quiet"}, flags...)
	l.cmd = exec.CommandContext(ctx, filepath.Join(n.Bins, "loadgen"), args...)
	l.cmd.Stdout, l.cmd.Stderr = &l.out, &l.out
	l.cmd.Cancel = func() error { return l.cmd.Process.Signal(os.Interrupt) } // let it flush its events
	l.cmd.WaitDelay = 10 * time.Second
	if err := l.cmd.Start(); err != nil {
		cancel()
		n.t.Fatal(err)
	}
	go func() {
		l.err = l.cmd.Wait()
		close(l.done)
	}()
	n.t.Cleanup(func() {
		if err := l.Stop(); err != nil && n.t.Failed() {
			n.t.Logf("loadgen: %v\n%s", err, l.Output())
		}
	})
	return l
}

// Stop interrupts the load driver (it flushes its events and exits) and
// waits for it; it returns the driver's exit error, nil for a clean exit.
// Idempotent.
func (l *Load) Stop() error {
	l.stop.Do(func() {
		select {
		case <-l.done:
		default:
			_ = l.cmd.Process.Signal(os.Interrupt)
			select {
			case <-l.done:
			case <-time.After(10 * time.Second):
				l.cancel() // interrupt again, then kill after WaitDelay
				<-l.done
			}
		}
		l.cancel()
	})
	return l.err
}

// Output is what the load driver printed.
func (l *Load) Output() string { return l.out.String() }

// Events reads every request the load driver recorded so far. While it
// runs, or if it did not exit cleanly, a last line cut short is skipped;
// any other line that does not decode fails the test.
func (l *Load) Events() []LoadEvent {
	l.n.t.Helper()
	bz, err := os.ReadFile(l.events)
	if err != nil {
		l.n.t.Fatal(err)
	}
	mayBeCut := true
	select {
	case <-l.done:
		mayBeCut = l.err != nil
	default:
	}
	var out []LoadEvent
	scanner := bufio.NewScanner(bytes.NewReader(bz))
	for line := 1; scanner.Scan(); line++ {
		var ev LoadEvent
		if err := json.Unmarshal(scanner.Bytes(), &ev); err != nil {
			if mayBeCut && !bytes.HasSuffix(bz, []byte("\n")) && line == bytes.Count(bz, []byte("\n"))+1 {
				continue // the line being written when read
			}
			l.n.t.Fatalf("load events line %d: %v: %q", line, err, scanner.Text())
		}
		out = append(out, ev)
	}
	return out
}
