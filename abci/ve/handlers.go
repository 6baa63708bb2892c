package ve

import (
	"context"
	"fmt"

	abci "github.com/cometbft/cometbft/abci/types"

	"cosmossdk.io/log"
	"github.com/cosmos/cosmos-sdk/telemetry"
	sdk "github.com/cosmos/cosmos-sdk/types"

	"github.com/inferenced/inferenced/x/inference/types"
	"github.com/inferenced/inferenced/x/inference/verdict"
)

// GroupReader gives the epoch, and its group size, that the extensions of
// the block at voteHeight attest about (x/inference keeper.VoteGroup).
type GroupReader interface {
	VoteGroup(ctx context.Context, voteHeight int64) (uint64, int, error)
}

// Snapshotter is the health monitor's view; it must not do I/O.
type Snapshotter interface {
	Snapshot(epoch uint64, n int) ([]verdict.Verdict, error)
}

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

var abstain = &abci.ResponseExtendVote{VoteExtension: []byte{}}

// ExtendVote puts the monitor's current verdicts in the vote. It reads a
// snapshot (no I/O), verifies its own output, and on any problem, a panic
// included, abstains with an empty extension rather than fail the vote.
func (h Handler) ExtendVote() sdk.ExtendVoteHandler {
	return func(ctx sdk.Context, req *abci.RequestExtendVote) (resp *abci.ResponseExtendVote, err error) {
		defer func() {
			if r := recover(); r != nil {
				h.logger.Error("ExtendVote panicked; abstaining", "height", req.Height, "panic", r)
				resp, err = abstain, nil
			}
		}()
		bz, err := h.extension(ctx, req.Height)
		if err != nil {
			h.logger.Debug("abstaining in vote extension", "height", req.Height, "reason", err)
			telemetry.IncrCounter(1, "health_ve", "abstained")
			return abstain, nil
		}
		telemetry.SetGauge(float32(len(bz)), "health_ve", "size_bytes")
		return &abci.ResponseExtendVote{VoteExtension: bz}, nil
	}
}

func (h Handler) extension(ctx sdk.Context, height int64) ([]byte, error) {
	if h.monitor == nil {
		return nil, fmt.Errorf("no health monitor")
	}
	epoch, n, err := h.groups.VoteGroup(ctx, height)
	if err != nil {
		return nil, fmt.Errorf("epoch group: %w", err)
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
	bz, err := Encode(types.HealthVoteExtension{EpochIndex: epoch, Verdicts: packed})
	if err != nil {
		return nil, err
	}
	if _, err := CheckedVerdicts(bz, epoch, n); err != nil {
		return nil, fmt.Errorf("own extension does not verify: %w", err)
	}
	return bz, nil
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
		if err := Verify(ctx, h.groups, req.Height, req.VoteExtension); err != nil {
			h.logger.Debug("rejected vote extension", "height", req.Height, "validator", fmt.Sprintf("%X", req.ValidatorAddress), "err", err)
			return &abci.ResponseVerifyVoteExtension{Status: abci.ResponseVerifyVoteExtension_REJECT}, nil
		}
		return &abci.ResponseVerifyVoteExtension{Status: abci.ResponseVerifyVoteExtension_ACCEPT}, nil
	}
}

// Verify is the one check of an extension of the block at height, shared by
// VerifyVoteExtension and the proposal handlers.
func Verify(ctx context.Context, groups GroupReader, height int64, bz []byte) error {
	_, err := VerifiedVerdicts(ctx, groups, height, bz)
	return err
}

// VerifiedVerdicts verifies an extension of the block at height and returns
// its packed verdicts, nil for an abstention.
func VerifiedVerdicts(ctx context.Context, groups GroupReader, height int64, bz []byte) ([]byte, error) {
	if len(bz) == 0 {
		return nil, nil
	}
	epoch, n, err := groups.VoteGroup(ctx, height)
	if err != nil {
		return nil, fmt.Errorf("epoch group: %w", err)
	}
	return CheckedVerdicts(bz, epoch, n)
}

// CheckedVerdicts verifies an extension against a known epoch and group
// size (read once per commit) and returns its packed verdicts, nil for an
// abstention.
func CheckedVerdicts(bz []byte, epoch uint64, n int) ([]byte, error) {
	if len(bz) == 0 {
		return nil, nil
	}
	ext, err := Decode(bz, n)
	if err != nil {
		return nil, err
	}
	if err := Validate(ext, epoch, n); err != nil {
		return nil, err
	}
	return ext.Verdicts, nil
}

// Checker verifies the extensions of one commit against one group, read
// once per commit. It remembers nothing: checking an extension (about 50 ns
// for 1,000 executors) costs less than looking it up in a memo would.
type Checker struct {
	epoch uint64
	n     int
}

// NewChecker checks extensions for epoch with a group of n.
func NewChecker(epoch uint64, n int) Checker { return Checker{epoch: epoch, n: n} }

// Verdicts is CheckedVerdicts against the checker's epoch and group.
func (c Checker) Verdicts(bz []byte) ([]byte, error) { return CheckedVerdicts(bz, c.epoch, c.n) }
