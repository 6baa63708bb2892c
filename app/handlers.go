package app

import (
	"bytes"
	"context"
	"fmt"

	cmtcrypto "github.com/cometbft/cometbft/crypto"
	cryptoenc "github.com/cometbft/cometbft/crypto/encoding"

	"cosmossdk.io/log/v2"
	"github.com/cosmos/cosmos-sdk/baseapp"
	servertypes "github.com/cosmos/cosmos-sdk/server/types"
	sdk "github.com/cosmos/cosmos-sdk/types"

	"github.com/inferenced/inferenced/abci/preblock"
	"github.com/inferenced/inferenced/abci/proposals"
	"github.com/inferenced/inferenced/abci/ve"
	"github.com/inferenced/inferenced/monitor"
	"github.com/inferenced/inferenced/x/inference/routes"
)

// setHandlers installs the ABCI++ handlers of health attestation: the
// vote-extension and proposal handlers around the SDK defaults, with the
// health monitor behind ExtendVote when app.toml enables it, and the
// pre-blocker around the module manager's (the breaker's step with the
// block's attested samples). It must run before the app is loaded.
func (app *App) setHandlers(opts servertypes.AppOptions, logger log.Logger) error {
	app.routeWarmer = routes.NewWarmer(func() error {
		ctx, err := app.CreateQueryContext(0, false)
		if err != nil {
			return err
		}
		return app.Routes.Warm(ctx)
	}, logger.With("module", "route-warmer"))
	app.SetPrepareCheckStater(app.routeWarmer.Committed)

	cfg, err := monitor.ReadConfig(opts)
	if err != nil {
		return err
	}
	var snapshots ve.Snapshotter
	if cfg.Enabled {
		m, err := monitor.New(cfg, app.epochGroupSource, logger.With("module", "health-monitor"))
		if err != nil {
			return err
		}
		app.healthMonitor = monitor.NewLazy(m)
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
		app.InferenceKeeper, app.consensusKeys, app.InferenceKeeper, logger.With("module", "health-proposals"))
	app.SetPrepareProposal(props.PrepareProposal())
	app.SetProcessProposal(props.ProcessProposal())
	// The pre-blocker reads the bundle ProcessProposal decoded for the
	// same bytes instead of decoding it again (proposals.Accepted).
	app.SetPreBlocker(preblock.NewHandler(app.InferenceKeeper, props.Accepted()).WrappedPreBlocker(app.ModuleManager))
	return nil
}

// epochGroupSource gives the monitor the group of the last committed block:
// each member's address, inference URL, first model (what its canaries
// ask for; none: no canaries) and whether the circuit breaker holds it out
// of rotation, EXCLUDED or PROBE (suspect: canaried at the suspect rate
// for a while, so the canaries decide its probe soon). A record alone is
// not suspicion: at the honest baselines most executors hold one (a held
// traffic miss), and canarying them all harder multiplied the load for no
// gain (make sim, docs/simulation.md).
func (app *App) epochGroupSource(context.Context) (monitor.Group, error) {
	ctx, err := app.CreateQueryContext(0, false)
	if err != nil {
		return monitor.Group{}, err
	}
	g, err := app.InferenceKeeper.EpochGroup(ctx)
	if err != nil {
		return monitor.Group{}, err
	}
	held := map[string]bool{}
	if err := app.InferenceKeeper.Breaker().OutOfRotation(ctx, func(address string) { held[address] = true }); err != nil {
		return monitor.Group{}, err
	}
	out := monitor.Group{Epoch: g.EpochIndex, Members: make([]monitor.Member, len(g.Members))}
	for i, m := range g.Members {
		model := ""
		if len(m.Models) > 0 {
			model = m.Models[0]
		}
		out.Members[i] = monitor.Member{Address: m.Address, URL: m.InferenceUrl, Model: model, Suspect: held[m.Address]}
	}
	return out, nil
}

// consensusKeys looks validators' consensus keys up in staking by the
// consensus address CometBFT names each vote with, in the state the
// proposal is checked against: the one committed after the voted height
// (PrepareProposal and ProcessProposal of block H run on the state after
// H-1 and verify the votes of H-1).
//
// A consensus key rotation (x/staking MsgRotateConsPubKey, SDK v0.55)
// keeps that lookup right at every height without a fallback. Submitted in
// block S, it is scheduled for S+2 (ConsensusUpdateDelay): EndBlock S tells
// CometBFT old@0, new@power, so the old key signs up to S+1 and the new one
// from S+2; staking swaps the validator's key and its by-address index in
// EndBlock S+2. The votes of S+1 are checked against the state after S+1
// (old key, old address), those of S+2 against the state after S+2 (new
// key, new address): the state after H always holds the key that signed H.
// The old address then resolves to nothing (staking keeps only old
// addresses, for evidence, never old keys), and so does the new one before
// S+2: a key that did not sign a height is never found for it
// (TestConsensusKeysFollowARotation). The key found must also hash to the
// address asked for, so that no index entry can lend a vote another key.
func (app *App) consensusKeys(ctx sdk.Context) proposals.KeyLookup {
	return func(addr []byte) (cmtcrypto.PubKey, error) {
		pk, err := app.StakingKeeper.GetPubKeyByConsAddr(ctx, sdk.ConsAddress(addr))
		if err != nil {
			return nil, err
		}
		key, err := cryptoenc.PubKeyFromProto(pk)
		if err != nil {
			return nil, err
		}
		if !bytes.Equal(key.Address(), addr) {
			return nil, fmt.Errorf("staking holds the key of %X for %X", key.Address(), addr)
		}
		return key, nil
	}
}
