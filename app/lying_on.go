//go:build lying

package app

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"cosmossdk.io/log/v2"
	abci "github.com/cometbft/cometbft/abci/types"
	sdk "github.com/cosmos/cosmos-sdk/types"

	"github.com/inferenced/inferenced/abci/ve"
	"github.com/inferenced/inferenced/x/inference/service"
	"github.com/inferenced/inferenced/x/inference/types"
	"github.com/inferenced/inferenced/x/inference/verdict"
)

// LieEnv selects how a validator of the test build lies in its vote
// extensions: a mode below, or "file:PATH" to follow the mode written in
// that file (re-read every 200 ms; empty or missing = honest), so that one
// network can go through every mode. Unset, the validator is honest. The
// e2e tests run one such validator to show that a Byzantine minority can
// neither exclude a healthy executor nor keep a dead or degraded one in,
// nor stall the chain.
const LieEnv = "INFERENCED_LIE"

// Lying modes about liveness: the whole extension is the lie.
const (
	LieAllMiss    = "all-miss"    // every executor reported missed
	LieAllOK      = "all-ok"      // every executor reported ok, the dead one too
	LieGarbage    = "garbage"     // bytes that do not decode
	LieOversized  = "oversized"   // one byte over the size limit
	LieWrongEpoch = "wrong-epoch" // a well-formed extension for the next epoch
)

// Lying modes about service: the liveness verdicts are the validator's
// honest ones (its own monitor's), only the service reports lie.
const (
	LieServiceMax     = "service-max"     // every executor at the maximum failed share, 100%
	LieServiceZero    = "service-zero"    // every executor at 0%, a degraded one too
	LieServiceGarbage = "service-garbage" // a service field that does not decode: the extension is rejected
	// LieServiceTarget reports one executor at 100% and every other at
	// 0%: the first member of the group, or the member at index i with
	// "service-target:i".
	LieServiceTarget = "service-target"
)

var lieModes = []string{LieAllMiss, LieAllOK, LieGarbage, LieOversized, LieWrongEpoch,
	LieServiceMax, LieServiceZero, LieServiceGarbage, LieServiceTarget + "[:i]"}

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
		if err := checkMode(setting); err != nil {
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
		var truth []byte
		if strings.HasPrefix(m, "service-") {
			rsp, err := honest(ctx, req)
			if err != nil {
				return rsp, err
			}
			truth = rsp.VoteExtension
		}
		ref, err := app.InferenceKeeper.VerdictReference(ctx, req.Height, epoch, n)
		if err != nil {
			return honest(ctx, req)
		}
		bz, err := lie(m, epoch, n, ref, truth)
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
		if m != "" && checkMode(m) != nil {
			continue
		}
		if old, _ := mode.Swap(m).(string); old != m {
			logger.Error("TEST BUILD: lying mode changed", "mode", m)
		}
	}
}

// checkMode says whether mode is one lie knows.
func checkMode(mode string) error {
	_, err := lie(mode, 1, 1, nil, nil)
	return err
}

// lie builds the extension of a lying validator for a group of n whose
// verdicts are relative to ref (keeper.VerdictReference), so that a lie
// says what it says whatever the chain attested before; honest is its
// honest extension (the service modes keep its liveness verdicts).
func lie(mode string, epoch uint64, n int, ref, honest []byte) ([]byte, error) {
	all := func(epoch uint64, v verdict.Verdict) ([]byte, error) {
		vs := make([]verdict.Verdict, n)
		for i := range vs {
			vs[i] = v
		}
		packed, err := verdict.Pack(vs)
		if err != nil {
			return nil, err
		}
		if packed, err = verdict.Relative(packed, ref, n); err != nil {
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
	case LieServiceMax:
		return lieAboutService(epoch, n, ref, honest, func(int) service.Report { return service.MaxRate })
	case LieServiceZero:
		return lieAboutService(epoch, n, ref, honest, func(int) service.Report { return 0 })
	case LieServiceGarbage:
		return serviceGarbage(epoch, n, ref, honest)
	}
	if rest, ok := strings.CutPrefix(mode, LieServiceTarget); ok {
		target := 0
		if rest != "" {
			i, err := strconv.Atoi(strings.TrimPrefix(rest, ":"))
			if err != nil || !strings.HasPrefix(rest, ":") || i < 0 {
				return nil, fmt.Errorf("%s=%q: the target is a member index, %s:<i>", LieEnv, mode, LieServiceTarget)
			}
			target = i
		}
		return lieAboutService(epoch, n, ref, honest, func(i int) service.Report {
			if i == target {
				return service.MaxRate
			}
			return 0
		})
	}
	return nil, fmt.Errorf("%s=%q: modes are %s", LieEnv, mode, strings.Join(lieModes, ", "))
}

// honestVerdicts is the packed liveness verdicts of the honest extension
// (relative to ref, as it carries them), all unknown if it abstained or
// does not decode.
func honestVerdicts(n int, ref, honest []byte) ([]byte, error) {
	if ext, err := ve.Decode(honest, n); err == nil && len(honest) > 0 {
		return ext.Verdicts, nil
	}
	unknown, err := verdict.Pack(make([]verdict.Verdict, n))
	if err != nil {
		return nil, err
	}
	return verdict.Relative(unknown, ref, n)
}

// lieAboutService is the honest liveness verdicts with the service report
// rate(i) for every member i.
func lieAboutService(epoch uint64, n int, ref, honest []byte, rate func(int) service.Report) ([]byte, error) {
	packed, err := honestVerdicts(n, ref, honest)
	if err != nil {
		return nil, err
	}
	reports := make([]service.Report, n)
	for i := range reports {
		reports[i] = rate(i)
	}
	list, err := service.Encode(service.Clamp(reports))
	if err != nil {
		return nil, err
	}
	return ve.Encode(types.HealthVoteExtension{EpochIndex: epoch, Verdicts: packed, Service: list}, n)
}

// serviceGarbage is the honest liveness verdicts, canonically framed, with
// a service field that does not decode (a wrong marker byte): ve.Encode
// refuses it, so the message is marshalled here; VerifyVoteExtension
// rejects the whole extension.
func serviceGarbage(epoch uint64, n int, ref, honest []byte) ([]byte, error) {
	packed, err := honestVerdicts(n, ref, honest)
	if err != nil {
		return nil, err
	}
	compact, err := verdict.Compact(packed, n)
	if err != nil {
		return nil, err
	}
	ext := types.HealthVoteExtension{EpochIndex: epoch, Verdicts: compact, Service: []byte{0x07, 0xff, 0xff}}
	return ext.Marshal()
}
