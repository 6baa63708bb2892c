//go:build lying

package app

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
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

// lyingVotes wraps the honest ExtendVote of the validator started with
// LieEnv set: it lies in the mode set. A lie that the honest
// VerifyVoteExtension refuses (garbage, oversized, wrong-epoch,
// service-garbage) is signed all the same, for the other validators to
// refuse: CometBFT v0.40 verifies a node's own non-empty extension right
// after ExtendVote and panics the node on a refusal, so this validator's
// VerifyVoteExtension (App.VerifyVoteExtension, below) accepts its own
// last lie. Its precommits carrying such a lie are then invalid for
// everyone else, as a Byzantine validator's would be.
func (app *App) lyingVotes(honest sdk.ExtendVoteHandler, logger log.Logger) (sdk.ExtendVoteHandler, error) {
	setting := os.Getenv(LieEnv)
	if setting == "" {
		return honest, nil
	}
	l := &liar{groups: app.InferenceKeeper}
	if path, ok := strings.CutPrefix(setting, "file:"); ok {
		l.mode.Store("")
		go followMode(path, &l.mode, logger)
	} else {
		if err := checkMode(setting); err != nil {
			return nil, err
		}
		l.mode.Store(setting)
	}
	liars.Store(app, l)
	logger.Error("TEST BUILD: this validator lies in its vote extensions", LieEnv, setting)
	return l.extendVote(honest), nil
}

// liars holds the liar of each App of the process that lies (one in a
// node; tests make several), for its VerifyVoteExtension.
var liars sync.Map // *App -> *liar

// VerifyVoteExtension shadows BaseApp's in the lying build only: a lying
// validator accepts its own last lie (lyingVerify), so that CometBFT's
// check of its own extension lets it sign the lie; everything else goes to
// BaseApp, the honest handler. handlers.go stays as it is: CometBFT calls
// the ABCI method of *App, whose own method wins over the embedded one.
func (app *App) VerifyVoteExtension(req *abci.RequestVerifyVoteExtension) (*abci.ResponseVerifyVoteExtension, error) {
	return app.lyingVerify(app.BaseApp.VerifyVoteExtension)(req)
}

// lyingVerify is honest, except that the lying validator (lyingVotes)
// accepts exactly its own last lie: the same height, the same bytes.
func (app *App) lyingVerify(honest verifyFunc) verifyFunc {
	v, ok := liars.Load(app)
	if !ok {
		return honest
	}
	return v.(*liar).verify(honest)
}

// verifyFunc is the ABCI VerifyVoteExtension method.
type verifyFunc func(*abci.RequestVerifyVoteExtension) (*abci.ResponseVerifyVoteExtension, error)

// liar is one lying validator: its mode, and its last lie, which its own
// VerifyVoteExtension accepts.
type liar struct {
	groups ve.GroupReader
	mode   atomic.Value // string; "": honest
	last   atomic.Pointer[ownLie]
}

// ownLie is the extension a liar last made, for the height it made it.
type ownLie struct {
	height int64
	bz     []byte
}

func (l *liar) extendVote(honest sdk.ExtendVoteHandler) sdk.ExtendVoteHandler {
	return func(ctx sdk.Context, req *abci.RequestExtendVote) (*abci.ResponseExtendVote, error) {
		rsp, err := l.extend(ctx, req, honest)
		if err == nil && rsp != nil {
			l.last.Store(&ownLie{height: req.Height, bz: rsp.VoteExtension})
		}
		return rsp, err
	}
}

// extend is the liar's extension: the lie of its mode, or the honest one
// when it is honest or cannot build the lie.
func (l *liar) extend(ctx sdk.Context, req *abci.RequestExtendVote, honest sdk.ExtendVoteHandler) (*abci.ResponseExtendVote, error) {
	m, _ := l.mode.Load().(string)
	if m == "" {
		return honest(ctx, req)
	}
	epoch, n, err := l.groups.VoteGroup(ctx, req.Height)
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
	ref, err := l.groups.VerdictReference(ctx, req.Height, epoch, n)
	if err != nil {
		return honest(ctx, req)
	}
	bz, err := lie(m, epoch, n, ref, truth)
	if err != nil {
		return honest(ctx, req)
	}
	return &abci.ResponseExtendVote{VoteExtension: bz}, nil
}

// verify accepts the liar's own last lie (what CometBFT checks right after
// ExtendVote) and answers as honest otherwise: another validator's
// extension, or the same bytes at another height, get the honest answer.
func (l *liar) verify(honest verifyFunc) verifyFunc {
	return func(req *abci.RequestVerifyVoteExtension) (*abci.ResponseVerifyVoteExtension, error) {
		if own := l.last.Load(); own != nil && len(req.VoteExtension) > 0 &&
			own.height == req.Height && bytes.Equal(own.bz, req.VoteExtension) {
			return &abci.ResponseVerifyVoteExtension{Status: abci.ResponseVerifyVoteExtension_ACCEPT}, nil
		}
		return honest(req)
	}
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
