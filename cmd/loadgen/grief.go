package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"time"

	"github.com/inferenced/inferenced/x/inference/types"
)

// Grief-mode outcomes of a start attempt, in the events file.
const (
	outcomeStarted = "started"
	outcomeRefused = "refused"
)

// griefStart is a start that passed CheckTx, waiting for its block.
type griefStart struct {
	startedInference
	sentAt int64
}

// blockFigures is what the chain did with the griefer's starts in one block.
type blockFigures struct {
	started, refused int
	reasons          map[string]int
}

// griefer plays an agent that starts inferences and never forwards them.
type griefer struct {
	d       *driver
	pending []griefStart
	byBlock map[int64]*blockFigures
}

// griefRun starts -rate inferences per block (naming -target, or a drawn
// executor) and never calls the executor, then reports, per block, the
// starts the chain accepted and refused and why.
func (d *driver) griefRun(ctx context.Context) error {
	g := &griefer{d: d, byBlock: map[int64]*blockFigures{}}
	loopErr := g.loop(ctx)
	// Resolve and settle after an interrupt too: the figures are the point.
	settleCtx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := g.resolveAll(settleCtx); err != nil {
		fmt.Fprintln(os.Stderr, "loadgen: resolve:", err)
	}
	if err := d.settle(settleCtx); err != nil {
		fmt.Fprintln(os.Stderr, "loadgen: settle:", err)
	}
	g.print(os.Stdout)
	fmt.Println()
	names := map[string]string{}
	for addr, a := range d.accounts {
		names[addr] = a.name
	}
	d.stats.print(os.Stdout, names)
	fmt.Println()
	d.stats.printAgents(os.Stdout)
	return loopErr
}

func (g *griefer) loop(ctx context.Context) error {
	d := g.d
	h, err := d.chain.height(ctx)
	if err != nil {
		return err
	}
	for n := 0; d.cfg.blocks == 0 || n < d.cfg.blocks; n++ {
		if h, err = d.chain.waitForBlockAfter(ctx, h); err != nil {
			return err
		}
		for k := 0; k < d.cfg.rate; k++ {
			g.attempt(ctx, h, k)
		}
		if err := g.resolve(ctx); err != nil {
			return err
		}
		if !d.cfg.quiet {
			fmt.Printf("block %d: sent %d, awaiting their block %d\n", h, d.cfg.rate, len(g.pending))
		}
	}
	return nil
}

// target is the executor a start names: -target, or a draw.
func (g *griefer) target(ctx context.Context, h int64, k int) (string, error) {
	if g.d.cfg.target != "" {
		return g.d.cfg.target, nil
	}
	res, err := g.d.chain.inference.GetRandomExecutor(ctx, &types.QueryGetRandomExecutorRequest{Model: g.d.cfg.model, Seed: g.d.seed(h, k)})
	if err != nil {
		return "", err
	}
	return res.Executor.Address, nil
}

func (g *griefer) attempt(ctx context.Context, h int64, k int) {
	d := g.d
	exec, err := g.target(ctx, h, k)
	if err != nil {
		fmt.Fprintf(os.Stderr, "h=%d: no executor: %v\n", h, err)
		return
	}
	agent := d.nextAgent()
	id := fmt.Sprintf("%s-%d-%d", d.cfg.runID, h, k)
	d.stats.update(exec, func(s *executorStats) { s.Assigned++ })
	hash, err := d.start(ctx, agent, id, exec)
	if err != nil {
		d.stats.update(exec, func(s *executorStats) { s.StartFailed++ })
		g.count(h, id, exec, agent.name, reasonOf(err))
		return
	}
	g.pending = append(g.pending, griefStart{startedInference{id: id, executor: exec, hash: hash, agent: agent}, h})
}

// count records one start attempt's outcome in the block that decided it:
// reason "" is a start the chain accepted.
func (g *griefer) count(h int64, id, exec, agent, reason string) {
	f, ok := g.byBlock[h]
	if !ok {
		f = &blockFigures{reasons: map[string]int{}}
		g.byBlock[h] = f
	}
	outcome := outcomeStarted
	if reason != "" {
		outcome = outcomeRefused
		f.refused++
		f.reasons[reason]++
	} else {
		f.started++
	}
	g.d.stats.record(event{Height: h, InferenceID: id, Executor: exec, Outcome: outcome, Agent: agent, Reason: reason})
}

// resolve looks up every pending start once and counts those committed.
func (g *griefer) resolve(ctx context.Context) error {
	kept := g.pending[:0]
	for _, p := range g.pending {
		res, ok, err := g.d.chain.committedTx(ctx, p.hash)
		if err != nil {
			return err
		}
		switch {
		case !ok:
			kept = append(kept, p)
		case res.refused != nil:
			g.d.stats.agent(p.agent.name, func(as *agentStats) { as.Starts-- })
			g.d.refuse(p.agent.name, res.refused)
			g.count(res.height, p.id, p.executor, p.agent.name, res.refused.Reason)
		default:
			g.d.started = append(g.d.started, p.startedInference)
			g.count(res.height, p.id, p.executor, p.agent.name, "")
		}
	}
	g.pending = kept
	return nil
}

// resolveAll waits for the blocks of every pending start; one still not
// committed when ctx ends is counted as refused, in the block it was sent.
func (g *griefer) resolveAll(ctx context.Context) error {
	h, err := g.d.chain.height(ctx)
	for err == nil && len(g.pending) > 0 {
		if err = g.resolve(ctx); err != nil || len(g.pending) == 0 {
			break
		}
		h, err = g.d.chain.waitForBlockAfter(ctx, h)
	}
	for _, p := range g.pending {
		g.d.stats.agent(p.agent.name, func(as *agentStats) { as.Starts-- })
		reason := "start never committed"
		g.d.refuse(p.agent.name, errors.New(reason))
		g.count(p.sentAt, p.id, p.executor, p.agent.name, reason)
	}
	g.pending = nil
	return err
}

// print writes one line per block that decided a start, then its refusals:
//
//	block <h>: started <n> refused <m>
//	  refused x<count>: <the chain's error text>
func (g *griefer) print(w io.Writer) {
	heights := make([]int64, 0, len(g.byBlock))
	for h := range g.byBlock {
		heights = append(heights, h)
	}
	sort.Slice(heights, func(i, j int) bool { return heights[i] < heights[j] })
	for _, h := range heights {
		f := g.byBlock[h]
		fmt.Fprintf(w, "block %d: started %d refused %d\n", h, f.started, f.refused)
		reasons := make([]string, 0, len(f.reasons))
		for r := range f.reasons {
			reasons = append(reasons, r)
		}
		sort.Strings(reasons)
		for _, r := range reasons {
			fmt.Fprintf(w, "  refused x%d: %s\n", f.reasons[r], r)
		}
	}
}
