package app

import (
	"context"
	"fmt"
	"sync"

	abci "github.com/cometbft/cometbft/abci/types"
	cmtcrypto "github.com/cometbft/cometbft/crypto"
	cryptoenc "github.com/cometbft/cometbft/crypto/encoding"
	"github.com/spf13/cast"

	"cosmossdk.io/log"
	"github.com/cosmos/cosmos-sdk/baseapp"
	servertypes "github.com/cosmos/cosmos-sdk/server/types"
	"github.com/cosmos/cosmos-sdk/telemetry"
	sdk "github.com/cosmos/cosmos-sdk/types"

	"github.com/inferenced/inferenced/abci/proposals"
	"github.com/inferenced/inferenced/abci/ve"
	"github.com/inferenced/inferenced/monitor"
	"github.com/inferenced/inferenced/x/inference/keeper"
	"github.com/inferenced/inferenced/x/inference/verdict"
)

// lazyMonitor starts the health monitor on the first vote extension, so it
// runs only in a node that votes (not in CLI commands that build the app).
type lazyMonitor struct {
	m       *monitor.Monitor
	once    sync.Once
	mu      sync.Mutex
	started bool
}

func (l *lazyMonitor) Snapshot(epoch uint64, n int) ([]verdict.Verdict, error) {
	l.once.Do(func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		l.m.Start()
		l.started = true
	})
	return l.m.Snapshot(epoch, n)
}

func (l *lazyMonitor) stop() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.started {
		l.m.Stop()
		l.started = false
	}
}

// monitorConfig reads [health-monitor] from app.toml, defaults for what is
// missing.
func monitorConfig(opts servertypes.AppOptions) (monitor.Config, error) {
	cfg := monitor.DefaultConfig()
	if v := opts.Get("health-monitor.enabled"); v != nil {
		cfg.Enabled = cast.ToBool(v)
	}
	if v := opts.Get("health-monitor.probe-interval"); v != nil {
		cfg.ProbeInterval = cast.ToDuration(v)
	}
	if v := opts.Get("health-monitor.probe-timeout"); v != nil {
		cfg.ProbeTimeout = cast.ToDuration(v)
	}
	if v := opts.Get("health-monitor.verdict-ttl"); v != nil {
		cfg.VerdictTTL = cast.ToDuration(v)
	}
	if v := opts.Get("health-monitor.max-concurrency"); v != nil {
		cfg.MaxConcurrency = cast.ToInt(v)
	}
	if v := opts.Get("health-monitor.health-path"); v != nil {
		cfg.HealthPath = cast.ToString(v)
	}
	if v := opts.Get("health-monitor.allow-private"); v != nil {
		cfg.AllowPrivate = cast.ToBool(v)
	}
	if err := cfg.Validate(); err != nil {
		return cfg, fmt.Errorf("app.toml: %w", err)
	}
	return cfg, nil
}

// setHealthAttestation installs the vote-extension and proposal handlers
// around the SDK defaults. It must run before the app is loaded.
func (app *App) setHealthAttestation(opts servertypes.AppOptions, logger log.Logger) error {
	cfg, err := monitorConfig(opts)
	if err != nil {
		return err
	}
	var snapshots ve.Snapshotter
	if cfg.Enabled {
		m, err := monitor.New(cfg, app.epochGroupSource, logger.With("module", "health-monitor"))
		if err != nil {
			return err
		}
		app.healthMonitor = &lazyMonitor{m: m}
		snapshots = app.healthMonitor
	}
	votes := ve.NewHandler(app.InferenceKeeper, snapshots, logger.With("module", "health-ve"))
	extend, err := app.lyingVotes(votes.ExtendVote(), logger)
	if err != nil {
		return err
	}
	app.SetExtendVoteHandler(extend)
	app.SetVerifyVoteExtensionHandler(votes.VerifyVoteExtension())
	inner := baseapp.NewDefaultProposalHandler(app.Mempool(), app)
	props := proposals.NewHandler(inner.PrepareProposalHandler(), inner.ProcessProposalHandler(),
		app.InferenceKeeper, app.consensusKeys, logger.With("module", "health-proposals"))
	app.SetPrepareProposal(props.PrepareProposal())
	app.SetProcessProposal(props.ProcessProposal())
	return nil
}

// epochGroupSource gives the monitor the group of the last committed block.
func (app *App) epochGroupSource(context.Context) (monitor.Group, error) {
	ctx, err := app.CreateQueryContext(0, false)
	if err != nil {
		return monitor.Group{}, err
	}
	g, err := app.InferenceKeeper.EpochGroup(ctx)
	if err != nil {
		return monitor.Group{}, err
	}
	out := monitor.Group{Epoch: g.EpochIndex, Members: make([]monitor.Member, len(g.Members))}
	for i, m := range g.Members {
		out.Members[i] = monitor.Member{Address: m.Address, URL: m.InferenceUrl}
	}
	return out, nil
}

// consensusKeys looks validators' consensus keys up in staking.
func (app *App) consensusKeys(ctx sdk.Context) proposals.KeyLookup {
	return func(addr []byte) (cmtcrypto.PubKey, error) {
		pk, err := app.StakingKeeper.GetPubKeyByConsAddr(ctx, sdk.ConsAddress(addr))
		if err != nil {
			return nil, err
		}
		return cryptoenc.PubKeyFromProto(pk)
	}
}

// attestedSamples reads the health bundle of a block that ProcessProposal
// accepted. Every node reads the same bytes the same way; a bundle that
// does not decode here (which ProcessProposal rules out) only skips the
// block's attestations.
func (app *App) attestedSamples(ctx sdk.Context, req *abci.RequestFinalizeBlock) []keeper.AttestedSample {
	if !proposals.ExtensionsEnabled(ctx, req.Height) || len(req.Txs) == 0 || !proposals.IsBundle(req.Txs[0]) {
		return nil
	}
	b, err := proposals.Decode(req.Txs[0])
	if err != nil {
		ctx.Logger().Error("undecodable health bundle in a decided block", "height", req.Height, "err", err)
		return nil
	}
	samples, err := app.InferenceKeeper.AttestedSamples(ctx, b.Epoch, b.Samples)
	if err != nil {
		ctx.Logger().Error("health bundle does not fit the epoch group", "height", req.Height, "err", err)
		return nil
	}
	misses := 0
	for _, s := range samples {
		if s.Miss {
			misses++
		}
	}
	telemetry.IncrCounter(float32(len(samples)-misses), "health_attested", "ok")
	telemetry.IncrCounter(float32(misses), "health_attested", "miss")
	return samples
}

// Close stops the health monitor, then the base app.
func (app *App) Close() error {
	if app.healthMonitor != nil {
		app.healthMonitor.stop()
	}
	return app.BaseApp.Close()
}
