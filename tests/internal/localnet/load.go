package localnet

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
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

// LoadEvent is one request of the load driver, from its events file (with
// -grief: one start attempt).
type LoadEvent struct {
	// Height is the height of the state the draw read; with -grief, the
	// block that executed (or CheckTx that refused) the start.
	Height   int64  `json:"height"`
	ID       string `json:"inference_id"`
	Executor string `json:"executor"`
	Outcome  string `json:"outcome"`
	Probe    bool   `json:"probe"`
	Agent    string `json:"agent"`  // the key name of the agent that started it
	Reason   string `json:"reason"` // the chain's error text of a refused start
}

// Outcomes of a griefer's start attempt (LoadEvent.Outcome with -grief).
const (
	GriefStarted = "started"
	GriefRefused = "refused"
)

// LoadOption adds flags to a load driver run.
type LoadOption func(*[]string)

// AsAgents plays the given agent keys round-robin (-agents) instead of the
// driver's default: every registered agent<k> (honest), the griefer (grief).
func AsAgents(keys ...string) LoadOption {
	return func(flags *[]string) { *flags = append(*flags, "-agents", strings.Join(keys, ",")) }
}

// StartLoad runs loadgen at rate requests per block, each given up after
// 1 s without an answer (-exec-timeout), until Stop (or, at the latest,
// until timeout), as every registered agent unless AsAgents says otherwise.
func (n *Net) StartLoad(rate int, run string, timeout time.Duration, opts ...LoadOption) *Load {
	n.t.Helper()
	return n.startLoad(run, timeout, withOptions(opts, "-rate", strconv.Itoa(rate), "-exec-timeout", "1s")...)
}

// RunLoad runs loadgen at rate requests per block for blocks blocks, with
// its default request timeout, and waits until it is done (at most
// timeout); a driver that fails fails the test, showing its output.
func (n *Net) RunLoad(rate, blocks int, run string, timeout time.Duration, opts ...LoadOption) *Load {
	n.t.Helper()
	l := n.startLoad(run, timeout, withOptions(opts, "-rate", strconv.Itoa(rate), "-blocks", strconv.Itoa(blocks))...)
	l.Wait()
	return l
}

// StartGrief runs loadgen -grief as the griefer (GrieferKey, unless
// AsAgents): rate starts per block that are never forwarded, so that each
// expires, naming target in every start ("" draws the executor), for blocks
// blocks (0: until Stop) or at most timeout. GriefBlocks reads its figures.
func (n *Net) StartGrief(target string, rate, blocks int, run string, timeout time.Duration, opts ...LoadOption) *Load {
	n.t.Helper()
	flags := []string{"-grief", "-rate", strconv.Itoa(rate), "-blocks", strconv.Itoa(blocks)}
	if target != "" {
		flags = append(flags, "-target", target)
	}
	return n.startLoad(run, timeout, withOptions(opts, flags...)...)
}

func withOptions(opts []LoadOption, flags ...string) []string {
	for _, o := range opts {
		o(&flags)
	}
	return flags
}

// Wait waits until the driver exits by itself (a run of -blocks blocks, or
// its timeout); a driver that fails fails the test, showing its output.
func (l *Load) Wait() {
	l.n.t.Helper()
	<-l.done
	if l.err != nil {
		l.n.t.Fatalf("loadgen: %v\n%s", l.err, l.Output())
	}
}

// GriefBlock is what the chain did with a griefer's starts in one block.
type GriefBlock struct {
	Height           int64
	Started, Refused int
	Reasons          map[string]int // the chain's error text: how many refused with it
}

// GriefBlocks is the griefer's figures per block so far, in height order,
// from its events (a start attempt is recorded once its block decided it).
func (l *Load) GriefBlocks() []GriefBlock {
	l.n.t.Helper()
	var out []GriefBlock
	at := map[int64]int{}
	for _, ev := range l.Events() {
		i, ok := at[ev.Height]
		if !ok {
			i = len(out)
			at[ev.Height] = i
			out = append(out, GriefBlock{Height: ev.Height, Reasons: map[string]int{}})
		}
		switch ev.Outcome {
		case GriefStarted:
			out[i].Started++
		case GriefRefused:
			out[i].Refused++
			out[i].Reasons[ev.Reason]++
		default:
			l.n.t.Fatalf("griefer event %+v: outcome %q is neither %q nor %q", ev, ev.Outcome, GriefStarted, GriefRefused)
		}
	}
	slices.SortFunc(out, func(a, b GriefBlock) int { return cmp.Compare(a.Height, b.Height) })
	return out
}

// StartLoadOf is StartLoad with another release's load driver (its flags
// must include StartLoad's: -rate, -exec-timeout, -run, -events, -quiet),
// as its single default agent.
func (n *Net) StartLoadOf(r Release, rate int, run string, timeout time.Duration) *Load {
	n.t.Helper()
	return n.startLoadWith(r.Loadgen(), run, timeout, "-rate", strconv.Itoa(rate), "-exec-timeout", "1s")
}

func (n *Net) startLoad(run string, timeout time.Duration, flags ...string) *Load {
	n.t.Helper()
	return n.startLoadWith(filepath.Join(n.Bins, "loadgen"), run, timeout, flags...)
}

func (n *Net) startLoadWith(bin, run string, timeout time.Duration, flags ...string) *Load {
	n.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	l := &Load{n: n, events: filepath.Join(n.Home, run+"-events.jsonl"), cancel: cancel, done: make(chan struct{})}
	args := append([]string{"-grpc", n.GRPC(0), "-keyring-dir", n.KeysDir, "-run", run, "-events", l.events, "-quiet"}, flags...)
	l.cmd = exec.CommandContext(ctx, bin, args...)
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
