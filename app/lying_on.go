//go:build lying

package app

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"cosmossdk.io/log"
	abci "github.com/cometbft/cometbft/abci/types"
	sdk "github.com/cosmos/cosmos-sdk/types"

	"github.com/inferenced/inferenced/abci/ve"
	"github.com/inferenced/inferenced/x/inference/types"
	"github.com/inferenced/inferenced/x/inference/verdict"
)

// LieEnv selects how a validator of the test build lies in its vote
// extensions: a mode below, or "file:PATH" to follow the mode written in
// that file (re-read every 200 ms; empty or missing = honest), so that one
// network can go through every mode. Unset, the validator is honest. The
// e2e tests run one such validator to show that a Byzantine minority can
// neither exclude a healthy executor nor keep a dead one in, nor stall the
// chain.
const LieEnv = "INFERENCED_LIE"

// Lying modes.
const (
	LieAllMiss    = "all-miss"    // every executor reported missed
	LieAllOK      = "all-ok"      // every executor reported ok, the dead one too
	LieGarbage    = "garbage"     // bytes that do not decode
	LieOversized  = "oversized"   // one byte over the size limit
	LieWrongEpoch = "wrong-epoch" // a well-formed extension for the next epoch
)

func (app *App) lyingVotes(honest sdk.ExtendVoteHandler, logger log.Logger) (sdk.ExtendVoteHandler, error) {
	setting := os.Getenv(LieEnv)
	if setting == "" {
		return honest, nil
	}
	var mode atomic.Value
	if path, ok := strings.CutPrefix(setting, "file:"); ok {
		mode.Store("")
		go followMode(path, &mode, logger)
	} else {
		if _, err := lie(setting, 1, 1); err != nil {
			return nil, err
		}
		mode.Store(setting)
	}
	logger.Error("TEST BUILD: this validator lies in its vote extensions", LieEnv, setting)
	return func(ctx sdk.Context, req *abci.RequestExtendVote) (*abci.ResponseExtendVote, error) {
		m, _ := mode.Load().(string)
		if m == "" {
			return honest(ctx, req)
		}
		epoch, n, err := app.InferenceKeeper.VoteGroup(ctx, req.Height)
		if err != nil || n == 0 {
			return honest(ctx, req)
		}
		bz, err := lie(m, epoch, n)
		if err != nil {
			return honest(ctx, req)
		}
		return &abci.ResponseExtendVote{VoteExtension: bz}, nil
	}, nil
}

// followMode keeps mode equal to the content of the file at path.
func followMode(path string, mode *atomic.Value, logger log.Logger) {
	for range time.Tick(200 * time.Millisecond) {
		bz, _ := os.ReadFile(path)
		m := strings.TrimSpace(string(bz))
		if _, err := lie(m, 1, 1); m != "" && err != nil {
			continue
		}
		if old, _ := mode.Swap(m).(string); old != m {
			logger.Error("TEST BUILD: lying mode changed", "mode", m)
		}
	}
}

// lie builds the extension of a lying validator for a group of n.
func lie(mode string, epoch uint64, n int) ([]byte, error) {
	all := func(epoch uint64, v verdict.Verdict) ([]byte, error) {
		vs := make([]verdict.Verdict, n)
		for i := range vs {
			vs[i] = v
		}
		packed, err := verdict.Pack(vs)
		if err != nil {
			return nil, err
		}
		return ve.Encode(types.HealthVoteExtension{EpochIndex: epoch, Verdicts: packed}, n)
	}
	switch mode {
	case LieAllMiss:
		return all(epoch, verdict.Miss)
	case LieAllOK:
		return all(epoch, verdict.OK)
	case LieGarbage:
		return []byte("\x0a\xffnot a vote extension"), nil
	case LieOversized:
		return bytes.Repeat([]byte{0x55}, ve.MaxSize(n)+1), nil
	case LieWrongEpoch:
		return all(epoch+1, verdict.OK)
	}
	return nil, fmt.Errorf("%s=%q: modes are %s, %s, %s, %s, %s", LieEnv, mode,
		LieAllMiss, LieAllOK, LieGarbage, LieOversized, LieWrongEpoch)
}
