//go:build sims

package app

import (
	"encoding/json"
	"math/rand"
	"os"
	"testing"
	"time"

	abci "github.com/cometbft/cometbft/abci/types"
	cmtproto "github.com/cometbft/cometbft/proto/tendermint/types"
	"github.com/stretchr/testify/require"

	sdk "github.com/cosmos/cosmos-sdk/types"
	"github.com/cosmos/cosmos-sdk/types/module"
	simtypes "github.com/cosmos/cosmos-sdk/types/simulation"
)

// continueChain simulates cfg.NumBlocks blocks from height from of cfg.BlockSize
// operations on an app whose chain did not start at height 1 (one
// imported at initial_height), as SimulateFromSeedX does from genesis:
// each block is finalized with every bonded validator's vote, then
// operations drawn by weight run in it; an operation's error fails the
// test. Future operations (x/gov's classic votes scheduled by a proposal)
// are dropped: they run after the block's EndBlock, which may already
// have closed the vote, and x/gov's own vote operations still vote on
// random open proposals. SimulateFromSeedX itself
// cannot continue a chain: its InitChain has no initial height and its
// evidence draw indexes past blocks from height 1.
func continueChain(tb testing.TB, app *App, r *rand.Rand, accs []simtypes.Account,
	ops []simtypes.WeightedOperation, cfg simtypes.Config, from int64, blockTime time.Time,
) {
	tb.Helper()
	total := 0
	for _, op := range ops {
		total += op.Weight()
	}
	pick := func() simtypes.Operation {
		n := r.Intn(total)
		for _, op := range ops {
			if n < op.Weight() {
				return op.Op()
			}
			n -= op.Weight()
		}
		return ops[len(ops)-1].Op()
	}
	height := from
	run := func(op simtypes.Operation, ctx sdk.Context) {
		msg, _, err := op(r, app.BaseApp, ctx, accs, cfg.ChainID)
		require.NoError(tb, err, "height %d: %s %s: %s", height, msg.Route, msg.Name, msg.Comment)
	}
	for ; height < from+int64(cfg.NumBlocks); height++ {
		blockTime = blockTime.Add(time.Duration(5+r.Intn(10)) * time.Second)
		_, err := app.FinalizeBlock(&abci.RequestFinalizeBlock{
			Height: height, Time: blockTime, DecidedLastCommit: abci.CommitInfo{Votes: bondedVotes(tb, app)},
		})
		require.NoError(tb, err, "finalize block %d", height)
		ctx := app.NewContextLegacy(false, cmtproto.Header{Height: height, Time: blockTime, ChainID: cfg.ChainID})
		for range cfg.BlockSize {
			run(pick(), ctx)
		}
		_, err = app.Commit()
		require.NoError(tb, err, "commit block %d", height)
	}
}

// bondedVotes are the last committed validator set's votes, all signed.
func bondedVotes(tb testing.TB, app *App) []abci.VoteInfo {
	tb.Helper()
	ctx := app.NewContext(true)
	vals, err := app.StakingKeeper.GetLastValidators(ctx)
	require.NoError(tb, err)
	votes := make([]abci.VoteInfo, 0, len(vals))
	for _, v := range vals {
		addr, err := v.GetConsAddr()
		require.NoError(tb, err)
		votes = append(votes, abci.VoteInfo{
			Validator:   abci.Validator{Address: addr, Power: v.ConsensusPower(app.StakingKeeper.PowerReduction(ctx))},
			BlockIdFlag: cmtproto.BlockIDFlagCommit,
		})
	}
	return votes
}

// continuationOps are the operations of every module in the simulation
// manager, with the weights of cfg's params file, as the SDK's
// BuildSimulationOperations builds them less x/gov's legacy content
// proposals, which this chain refuses (TestLegacyProposalIsRefusedWithoutPanic).
func continuationOps(tb testing.TB, app *App, cfg simtypes.Config) []simtypes.WeightedOperation {
	tb.Helper()
	simState := module.SimulationState{AppParams: make(simtypes.AppParams), Cdc: app.AppCodec(), TxConfig: app.TxConfig(), BondDenom: sdk.DefaultBondDenom}
	if cfg.ParamsFile != "" {
		bz, err := os.ReadFile(cfg.ParamsFile)
		require.NoError(tb, err)
		require.NoError(tb, json.Unmarshal(bz, &simState.AppParams))
	}
	simState.ProposalMsgs = app.SimulationManager().GetProposalMsgs(simState)
	return app.SimulationManager().WeightedOperations(simState)
}
