package ve

import (
	"fmt"

	abci "github.com/cometbft/cometbft/abci/types"

	"cosmossdk.io/log/v2"
	sdk "github.com/cosmos/cosmos-sdk/types"

	"github.com/inferenced/inferenced/appmetrics"
	"github.com/inferenced/inferenced/x/inference/service"
	"github.com/inferenced/inferenced/x/inference/types"
	"github.com/inferenced/inferenced/x/inference/verdict"
)

// Snapshotter is the health monitor's view; it must not do I/O.
type Snapshotter interface {
	// Snapshot is the liveness verdict on each of the n members of the
	// group of epoch.
	Snapshot(epoch uint64, n int) ([]verdict.Verdict, error)
	// Service is the failed share of each member's recent canaries, or
	// service.Unknown.
	Service(epoch uint64, n int) ([]service.Report, error)
}

// ServiceFloor is how many points above this validator's own median
// executor a failed share must stand before it reports it (service.Relative):
// below it, the few canaries of a window are noise. Provisional: the
// outage simulator chooses it with the service trip rule.
const ServiceFloor service.Report = 15

// Handler builds the ExtendVote and VerifyVoteExtension handlers.
type Handler struct {
	groups  GroupReader
	monitor Snapshotter // nil: this validator abstains
	logger  log.Logger
}

// NewHandler returns the vote-extension handlers; monitor may be nil.
func NewHandler(groups GroupReader, monitor Snapshotter, logger log.Logger) Handler {
	return Handler{groups: groups, monitor: monitor, logger: logger}
}

// abstain is the empty extension, made anew for each vote: a response
// shared between votes would carry into every later abstention whatever
// a caller wrote into one, which VerifyVoteExtension may refuse (and
// CometBFT v0.40 panics a node whose own extension is refused).
func abstain() *abci.ResponseExtendVote { return &abci.ResponseExtendVote{VoteExtension: []byte{}} }

// ExtendVote puts the monitor's current verdicts in the vote, relative to
// the chain's reference for the height (keeper.VerdictReference). It reads
// a snapshot (no I/O), verifies its own output, and on any problem, a
// panic included, abstains with an empty extension rather than fail the
// vote.
func (h Handler) ExtendVote() sdk.ExtendVoteHandler {
	return func(ctx sdk.Context, req *abci.RequestExtendVote) (resp *abci.ResponseExtendVote, err error) {
		defer func() {
			if r := recover(); r != nil {
				h.logger.Error("ExtendVote panicked; abstaining", "height", req.Height, "panic", r)
				seriesAbstained.Inc()
				resp, err = abstain(), nil
			}
		}()
		bz, err := h.extension(ctx, req.Height)
		if err != nil {
			h.logger.Debug("abstaining in vote extension", "height", req.Height, "reason", err)
			seriesAbstained.Inc()
			return abstain(), nil
		}
		appmetrics.Set(seriesExtensionSize, len(bz))
		return &abci.ResponseExtendVote{VoteExtension: bz}, nil
	}
}

func (h Handler) extension(ctx sdk.Context, height int64) ([]byte, error) {
	if h.monitor == nil {
		return nil, fmt.Errorf("no health monitor")
	}
	checker := NewChecker(ctx, h.groups, height)
	epoch, n, err := checker.Group()
	if err != nil {
		return nil, err
	}
	vs, err := h.monitor.Snapshot(epoch, n)
	if err != nil {
		return nil, err
	}
	if len(vs) != n {
		return nil, fmt.Errorf("snapshot has %d verdicts for %d executors", len(vs), n)
	}
	packed, err := verdict.Pack(vs)
	if err != nil {
		return nil, err
	}
	// What the chain already attests need not be sent again: the verdicts
	// go relative to its recent samples (x/inference/verdictref).
	ref, err := h.groups.VerdictReference(ctx, height, epoch, n)
	if err != nil {
		return nil, err
	}
	if packed, err = verdict.Relative(packed, ref, n); err != nil {
		return nil, err
	}
	bz, err := Encode(types.HealthVoteExtension{EpochIndex: epoch, Verdicts: packed, Service: h.service(epoch, n)}, n)
	if err != nil {
		return nil, err
	}
	if _, _, err := checker.Verdicts(bz); err != nil {
		return nil, fmt.Errorf("own extension does not verify: %w", err)
	}
	return bz, nil
}

// service is what this validator attests of the members' service: its
// monitor's failed shares relative to its own median executor, clamped to
// what an extension carries, encoded; none (abstaining on service alone)
// when the monitor has none to give.
func (h Handler) service(epoch uint64, n int) []byte {
	rates, err := h.monitor.Service(epoch, n)
	if err == nil && len(rates) != n {
		err = fmt.Errorf("service snapshot has %d reports for %d executors", len(rates), n)
	}
	var bz []byte
	if err == nil {
		bz, err = service.Attest(rates, ServiceFloor)
	}
	if err != nil {
		h.logger.Debug("abstaining on service in vote extension", "epoch", epoch, "reason", err)
		return nil
	}
	return bz
}

// VerifyVoteExtension accepts an empty extension (abstain) and the canonical
// extension for the epoch the block attests about; it rejects everything
// else, and never panics. Its answer depends only on the bytes, the height
// and committed state that the next block's proposal checks see alike.
func (h Handler) VerifyVoteExtension() sdk.VerifyVoteExtensionHandler {
	return func(ctx sdk.Context, req *abci.RequestVerifyVoteExtension) (resp *abci.ResponseVerifyVoteExtension, err error) {
		defer func() {
			if r := recover(); r != nil {
				h.logger.Error("VerifyVoteExtension panicked; rejecting", "height", req.Height, "panic", r)
				resp, err = &abci.ResponseVerifyVoteExtension{Status: abci.ResponseVerifyVoteExtension_REJECT}, nil
			}
		}()
		if _, _, err := NewChecker(ctx, h.groups, req.Height).Verdicts(req.VoteExtension); err != nil {
			h.logger.Debug("rejected vote extension", "height", req.Height, "validator", fmt.Sprintf("%X", req.ValidatorAddress), "err", err)
			return &abci.ResponseVerifyVoteExtension{Status: abci.ResponseVerifyVoteExtension_REJECT}, nil
		}
		return &abci.ResponseVerifyVoteExtension{Status: abci.ResponseVerifyVoteExtension_ACCEPT}, nil
	}
}
