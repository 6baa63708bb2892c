package ve

import (
	"context"
	"fmt"

	"github.com/inferenced/inferenced/x/inference/service"
)

// GroupReader gives the epoch, and its group size, that the extensions of
// the block at voteHeight attest about (x/inference keeper.VoteGroup), and
// the packing their verdicts are relative to (keeper.VerdictReference:
// nil, none), each the same from the state before that block and after
// it.
type GroupReader interface {
	VoteGroup(ctx context.Context, voteHeight int64) (uint64, int, error)
	VerdictReference(ctx context.Context, voteHeight int64, epoch uint64, n int) ([]byte, error)
}

// Checker is the one check of a vote extension: VerifyVoteExtension,
// ExtendVote's check of its own output and both proposal handlers use it.
// It is made once per commit, reading the group from state once; it keeps
// no memo of what it checked, since checking an extension (well under a
// microsecond for 1,000 executors) costs less than looking it up would.
type Checker struct {
	epoch uint64
	n     int
	err   error // the group could not be read: every non-empty extension fails
	// buf holds the decoded service reports of the extensions checked so
	// far (service.CheckList): one buffer for the commit, never shared by
	// two checkers. A Checker is used by one goroutine at a time.
	buf *[]uint32
}

// NewChecker checks the extensions of the block at voteHeight against the
// group they attest about. A group that cannot be read is not an error
// here: an abstention still verifies, anything else fails with it.
func NewChecker(ctx context.Context, groups GroupReader, voteHeight int64) Checker {
	epoch, n, err := groups.VoteGroup(ctx, voteHeight)
	if err != nil {
		return Checker{err: fmt.Errorf("epoch group: %w", err)}
	}
	return Checker{epoch: epoch, n: n, buf: new([]uint32)}
}

// Group is the epoch and group size the checker checks against, or why
// they could not be read.
func (c Checker) Group() (epoch uint64, n int, err error) { return c.epoch, c.n, c.err }

// Checked is what a valid extension says, aliasing its bytes: the verdicts
// in their canonical compact form (aggregate reads it as is) and the
// service reports (service.Median reads them as is; empty: none), or that
// the validator abstains (an empty extension).
type Checked struct {
	Verdicts, Service []byte
	Abstains          bool
	// Reports is Service decoded by its check (service.Checked): the
	// median adds it instead of reading Service again.
	Reports service.Checked
}

// Check verifies an extension (strict decoding, the epoch, exactly one
// verdict and at most one service report per member) and returns what it
// says.
func (c Checker) Check(bz []byte) (Checked, error) { return c.check(bz, c.buf) }

// check is Check, decoding the service reports into *buf when buf is not
// nil.
func (c Checker) check(bz []byte, buf *[]uint32) (Checked, error) {
	if len(bz) == 0 {
		return Checked{Abstains: true}, nil
	}
	if c.err != nil {
		return Checked{}, c.err
	}
	ext, reports, err := decodeWire(bz, c.n, buf)
	if err != nil {
		return Checked{}, err
	}
	if err := checkEpoch(ext, c.epoch); err != nil {
		return Checked{}, err
	}
	return Checked{Verdicts: ext.Verdicts, Service: ext.Service, Reports: reports}, nil
}

// Verdicts is Check's verdicts and abstention alone (VerifyVoteExtension,
// ExtendVote's check of its own output): the service reports are checked,
// not decoded, and nothing is allocated.
func (c Checker) Verdicts(bz []byte) (verdicts []byte, abstains bool, err error) {
	checked, err := c.check(bz, nil)
	return checked.Verdicts, checked.Abstains, err
}
