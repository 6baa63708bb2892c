// Command loadgen plays transfer agents against a localnet: every block it
// asks GetRandomExecutor, starts the inference on chain as one of its agents
// (round-robin), calls the executor's inference endpoint and, when the
// executor answers, finishes the inference with the executor's key. A dark
// executor's inferences expire. With -grief it plays an agent that starts
// inferences and never forwards them, so that they all expire.
package main

import (
	"context"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"hash/fnv"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/cosmos/cosmos-sdk/crypto/keyring"
	sdk "github.com/cosmos/cosmos-sdk/types"
	grpctypes "github.com/cosmos/cosmos-sdk/types/grpc"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	"github.com/inferenced/inferenced/x/inference/types"
)

type config struct {
	grpcAddr    string
	keyringDir  string
	chainID     string
	agents      string
	model       string
	rate        int
	blocks      int
	runID       string
	execTimeout time.Duration
	eventsPath  string
	quiet       bool
	grief       bool
	target      string
}

func main() {
	var cfg config
	flag.StringVar(&cfg.grpcAddr, "grpc", "127.0.0.1:9090", "gRPC address of a node")
	flag.StringVar(&cfg.keyringDir, "keyring-dir", "build/localnet/keys", "test-backend keyring holding the agent and executor keys")
	flag.StringVar(&cfg.chainID, "chain-id", "inferenced-local", "chain id")
	flag.StringVar(&cfg.agents, "agents", "", "comma-separated key names of the transfer agents, used round-robin (default: every agent<k> key; with -grief: griefer)")
	flag.StringVar(&cfg.agents, "agent", "", "one transfer agent's key name (shorthand for -agents)")
	flag.StringVar(&cfg.model, "model", "llama-7b", "model to request")
	flag.IntVar(&cfg.rate, "rate", 3, "inferences started per block")
	flag.IntVar(&cfg.blocks, "blocks", 0, "stop after this many blocks (0: until interrupted)")
	flag.StringVar(&cfg.runID, "run", "", "prefix of inference ids and seed of the run (default: start time)")
	flag.DurationVar(&cfg.execTimeout, "exec-timeout", 2*time.Second, "how long to wait for an executor's answer")
	flag.StringVar(&cfg.eventsPath, "events", "", "write one JSON line per routed request (with -grief: per start attempt) to this file")
	flag.BoolVar(&cfg.quiet, "quiet", false, "no line per block")
	flag.BoolVar(&cfg.grief, "grief", false, "start inferences and never forward them to the executor, so that they expire")
	flag.StringVar(&cfg.target, "target", "", "with -grief: name this executor address in every start instead of drawing one")
	flag.Parse()
	if cfg.runID == "" {
		cfg.runID = fmt.Sprintf("lg%d", time.Now().Unix())
	}
	if cfg.rate < 1 || cfg.rate > 1000 {
		fail(errors.New("-rate must be in 1..1000"))
	}
	if cfg.target != "" && !cfg.grief {
		fail(errors.New("-target needs -grief"))
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, cfg); err != nil && !errors.Is(err, context.Canceled) {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "loadgen:", err)
	os.Exit(1)
}

type driver struct {
	cfg      config
	chain    *chain
	signer   *signer
	agents   []*account // played round-robin, one per slot
	slots    int        // slots routed so far: the next agent is agents[slots % len]
	accounts map[string]*account
	stats    *stats
	http     *http.Client
	pending  sync.WaitGroup
	started  []startedInference
}

type startedInference struct {
	id, executor, hash string
	agent              *account
}

func run(ctx context.Context, cfg config) (err error) {
	cdc, txCfg, err := encoding()
	if err != nil {
		return err
	}
	kr, err := keyring.New(sdk.KeyringServiceName(), keyring.BackendTest, cfg.keyringDir, nil, cdc)
	if err != nil {
		return fmt.Errorf("open keyring %s: %w", cfg.keyringDir, err)
	}
	accounts, err := accountsByAddress(kr)
	if err != nil {
		return err
	}
	c, err := dialChain(cfg.grpcAddr, cdc)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := c.conn.Close(); cerr != nil {
			err = errors.Join(err, fmt.Errorf("close gRPC connection: %w", cerr))
		}
	}()
	agents, err := pickAgents(cfg.agents, cfg.grief, accounts)
	if err != nil {
		return fmt.Errorf("%s: %w", cfg.keyringDir, err)
	}
	var events *os.File
	if cfg.eventsPath != "" {
		if events, err = os.Create(cfg.eventsPath); err != nil {
			return err
		}
		// The events file is written until here: a failed close can lose its tail.
		defer func() {
			if cerr := events.Close(); cerr != nil {
				err = errors.Join(err, fmt.Errorf("close %s: %w", cfg.eventsPath, cerr))
			}
		}()
	}
	d := &driver{
		cfg: cfg, chain: c, agents: agents, accounts: accounts,
		signer: &signer{chain: c, txCfg: txCfg, keyring: kr, chainID: cfg.chainID},
		http:   &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }},
	}
	if events != nil {
		d.stats = newStats(events)
	} else {
		d.stats = newStats(nil)
	}
	if cfg.grief {
		return d.griefRun(ctx)
	}
	loopErr := d.loop(ctx)
	d.pending.Wait()
	// Settle: outcomes need expiration_blocks more blocks to be final.
	settleCtx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := d.settle(settleCtx); err != nil {
		fmt.Fprintln(os.Stderr, "loadgen: settle:", err)
	}
	names := map[string]string{}
	for addr, a := range accounts {
		names[addr] = a.name
	}
	d.stats.print(os.Stdout, names)
	fmt.Println()
	d.stats.printAgents(os.Stdout)
	return loopErr
}

func (d *driver) loop(ctx context.Context) error {
	h, err := d.chain.height(ctx)
	if err != nil {
		return err
	}
	for n := 0; d.cfg.blocks == 0 || n < d.cfg.blocks; n++ {
		if h, err = d.chain.waitForBlockAfter(ctx, h); err != nil {
			return err
		}
		for k := 0; k < d.cfg.rate; k++ {
			d.route(ctx, h, k)
		}
		if !d.cfg.quiet {
			fmt.Printf("block %d: routed %d\n", h, d.cfg.rate)
		}
	}
	return nil
}

// seed derives a reproducible lottery seed from the run, height and slot.
func (d *driver) seed(height int64, k int) uint64 {
	f := fnv.New64a()
	_, _ = f.Write([]byte(d.cfg.runID))
	var buf [16]byte
	binary.BigEndian.PutUint64(buf[:8], uint64(height))
	binary.BigEndian.PutUint64(buf[8:], uint64(k))
	_, _ = f.Write(buf[:])
	return f.Sum64()
}

func (d *driver) route(ctx context.Context, height int64, k int) {
	var header metadata.MD
	res, err := d.chain.inference.GetRandomExecutor(ctx, &types.QueryGetRandomExecutorRequest{Model: d.cfg.model, Seed: d.seed(height, k)},
		grpc.Header(&header))
	if err != nil {
		fmt.Fprintf(os.Stderr, "h=%d: no executor: %v\n", height, err)
		return
	}
	// Events carry the height of the state the draw read: the node may not
	// have committed the latest block yet, or may have moved past it.
	seedHeight := height
	if v := header.Get(grpctypes.GRPCBlockHeightHeader); len(v) == 1 {
		if h, err := strconv.ParseInt(v[0], 10, 64); err == nil {
			height = h
		}
	}
	exec := res.Executor
	id := fmt.Sprintf("%s-%d-%d", d.cfg.runID, seedHeight, k)
	d.stats.update(exec.Address, func(s *executorStats) { s.Assigned++ })
	agent := d.nextAgent()
	hash, err := d.start(ctx, agent, id, exec.Address)
	if err != nil {
		d.stats.update(exec.Address, func(s *executorStats) { s.StartFailed++ })
		d.stats.record(event{Height: height, InferenceID: id, Executor: exec.Address, Outcome: "start_failed", Probe: res.Probe,
			Agent: agent.name, Reason: reasonOf(err)})
		return
	}
	d.started = append(d.started, startedInference{id: id, executor: exec.Address, hash: hash, agent: agent})
	if res.Probe {
		d.stats.update(exec.Address, func(s *executorStats) { s.Probes++ })
	}
	d.pending.Add(1)
	go func() {
		defer d.pending.Done()
		d.serve(ctx, height, id, agent, exec, res.Probe)
	}()
}

// nextAgent is the agent of the next slot.
func (d *driver) nextAgent() *account {
	a := d.agents[d.slots%len(d.agents)]
	d.slots++
	return a
}

// start sends agent's MsgStartInference and counts it for the agent: a
// start the chain refuses (an agent stopped or not registered) is counted
// by reason and said once per reason on stderr; the run goes on.
func (d *driver) start(ctx context.Context, agent *account, id, executor string) (string, error) {
	msg := &types.MsgStartInference{Creator: agent.address, InferenceId: id, Model: d.cfg.model, Executor: executor}
	hash, err := d.signer.send(ctx, agent, msg)
	if err != nil {
		d.refuse(agent.name, err)
		return "", err
	}
	d.stats.agent(agent.name, func(as *agentStats) { as.Starts++ })
	return hash, nil
}

// refuse counts a refused start of agent.
func (d *driver) refuse(agent string, err error) {
	reason := reasonOf(err)
	if d.stats.refused(agent, reason) {
		fmt.Fprintf(os.Stderr, "loadgen: agent %s: start refused: %s\n", agent, reason)
	}
}

// reasonOf is the chain's error text for a refusal, else the error itself.
func reasonOf(err error) string {
	var r *refusal
	if errors.As(err, &r) {
		return r.Reason
	}
	return err.Error()
}

// serve asks the executor for agent's inference id and, answered, sends
// its finish naming the agent (ids are unique per agent).
func (d *driver) serve(ctx context.Context, height int64, id string, agent *account, exec types.EpochMember, probe bool) {
	record := func(outcome string) {
		d.stats.record(event{Height: height, InferenceID: id, Executor: exec.Address, Outcome: outcome, Probe: probe, Agent: agent.name})
	}
	hash, err := callExecutor(ctx, d.http, exec.InferenceUrl, id, d.cfg.model, d.cfg.execTimeout)
	if err != nil {
		d.stats.update(exec.Address, func(s *executorStats) { s.NoAnswer++ })
		record("no_answer")
		return
	}
	d.stats.update(exec.Address, func(s *executorStats) { s.Answered++ })
	acc, ok := d.accounts[exec.Address]
	if !ok {
		d.stats.update(exec.Address, func(s *executorStats) { s.FinishFailed++ })
		record("no_executor_key")
		return
	}
	msg := &types.MsgFinishInference{Creator: exec.Address, InferenceId: id, ResponseHash: hash, TransferAgent: agent.address}
	if _, err := d.signer.send(ctx, acc, msg); err != nil {
		d.stats.update(exec.Address, func(s *executorStats) { s.FinishFailed++ })
		record("finish_failed")
		return
	}
	record("answered")
}
