package proposals

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"

	abci "github.com/cometbft/cometbft/abci/types"
	cmtcrypto "github.com/cometbft/cometbft/crypto"
	cmtproto "github.com/cometbft/cometbft/proto/tendermint/types"

	"github.com/inferenced/inferenced/abci/ve"
	"github.com/inferenced/inferenced/x/inference/aggregate"
	"github.com/inferenced/inferenced/x/inference/service"
)

// KeyLookup returns a validator's consensus public key by consensus
// address, from the state the proposal is checked against.
type KeyLookup func(consAddr []byte) (cmtcrypto.PubKey, error)

// ExtensionCheck verifies an extension made at the commit's height and
// returns what it says: the handlers pass ve.Checker.Check, made once for
// the commit.
type ExtensionCheck func(ext []byte) (ve.Checked, error)

// Signed is an extended commit whose every remaining signature verified.
type Signed struct {
	// Votes are the commit votes with a valid extension (empty ones abstain),
	// with their power, for aggregation; Service the same votes' service
	// reports, for the median.
	Votes   []aggregate.Vote
	Service []service.Vote
	// ValidPower is their total power; TotalPower that of the whole set.
	ValidPower, TotalPower int64
}

// appendExtSignBytes appends what a validator signed for its extension of
// the block at height in round: CometBFT's CanonicalVoteExtension,
// length-delimited (protoio.MarshalDelimited), written by hand into the
// caller's buffer, since a commit's 150 extensions would otherwise cost a
// marshal and two allocations each: fields in number order, each omitted
// at its zero value as gogoproto omits it
// (TestExtSignBytesAreCometBFTs, FuzzExtSignBytes).
func appendExtSignBytes(dst []byte, chainID string, height int64, round int32, ext []byte) []byte {
	size := 0
	if len(ext) > 0 {
		size += 1 + uvarintLen(len(ext)) + len(ext)
	}
	if height != 0 {
		size += 9
	}
	if round != 0 {
		size += 9
	}
	if len(chainID) > 0 {
		size += 1 + uvarintLen(len(chainID)) + len(chainID)
	}
	dst = binary.AppendUvarint(dst, uint64(size))
	if len(ext) > 0 {
		dst = append(binary.AppendUvarint(append(dst, 0x0a), uint64(len(ext))), ext...)
	}
	if height != 0 {
		dst = binary.LittleEndian.AppendUint64(append(dst, 0x11), uint64(height))
	}
	if round != 0 {
		dst = binary.LittleEndian.AppendUint64(append(dst, 0x19), uint64(int64(round)))
	}
	if len(chainID) > 0 {
		dst = append(binary.AppendUvarint(append(dst, 0x22), uint64(len(chainID))), chainID...)
	}
	return dst
}

func uvarintLen(n int) int {
	k := 1
	for ; n >= 0x80; n >>= 7 {
		k++
	}
	return k
}

// verifyVote checks one vote's extension: counts is false for a vote that
// carries none (absent, nil, or pruned by the proposer); an extension on a
// vote that is not for the block, a missing or bad signature, or an invalid
// extension is an error.
// The sign bytes are built in *scratch, which it keeps for the next vote.
func verifyVote(v abci.ExtendedVoteInfo, chainID string, height int64, round int32, keys KeyLookup, check ExtensionCheck,
	scratch *[]byte,
) (ve.Checked, bool, error) {
	if v.BlockIdFlag != cmtproto.BlockIDFlagCommit || (len(v.VoteExtension) == 0 && len(v.ExtensionSignature) == 0) {
		if len(v.VoteExtension) != 0 || len(v.ExtensionSignature) != 0 {
			return ve.Checked{}, false, errors.New("extension on a vote that is not for the block")
		}
		return ve.Checked{}, false, nil
	}
	if len(v.ExtensionSignature) == 0 {
		return ve.Checked{}, false, errors.New("no extension signature")
	}
	key, err := keys(v.Validator.Address)
	if err != nil {
		return ve.Checked{}, false, fmt.Errorf("validator %X: %w", v.Validator.Address, err)
	}
	*scratch = appendExtSignBytes((*scratch)[:0], chainID, height, round, v.VoteExtension)
	if !key.VerifySignature(*scratch, v.ExtensionSignature) {
		return ve.Checked{}, false, fmt.Errorf("validator %X: bad extension signature", v.Validator.Address)
	}
	checked, err := check(v.VoteExtension)
	if err != nil {
		return ve.Checked{}, false, err
	}
	return checked, true, nil
}

// Prune is the proposer's one pass over its local last commit: in a copy,
// it clears the extension and signature of every vote whose extension does
// not verify (a bad signature, an invalid extension, a validator whose key
// the state no longer holds, one that has just left, or a vote not for the
// block), so nothing it removes can count, and checks what is left as Check
// checks a proposal: the Signed it returns is what every validator's Check
// of the same pruned commit returns, and an error means Check would refuse
// it (the proposer then sends the empty bundle). Each signature is
// verified once.
func Prune(ec abci.ExtendedCommitInfo, chainID string, height int64, keys KeyLookup, check ExtensionCheck) (abci.ExtendedCommitInfo, Signed, error) {
	out := abci.ExtendedCommitInfo{Round: ec.Round, Votes: make([]abci.ExtendedVoteInfo, len(ec.Votes))}
	copy(out.Votes, ec.Votes)
	s, err := verifyCommit(out, CommitInfoOf(ec), chainID, height, keys, check, func(i int) {
		out.Votes[i].VoteExtension, out.Votes[i].ExtensionSignature = nil, nil
	})
	return out, s, err
}

// Check verifies an extended commit rebuilt from a bundle (Bundle.Commit)
// against the block's last commit: the same round, validators, powers, order and flags; every
// remaining extension signed by its validator and valid; and valid
// extensions from at least 2/3 of the set's power (+1), so that honest
// validators hold a strict majority of it whenever Byzantine ones hold less
// than a third, whatever the proposer pruned.
func Check(ec abci.ExtendedCommitInfo, last abci.CommitInfo, chainID string, height int64, keys KeyLookup, check ExtensionCheck) (Signed, error) {
	return verifyCommit(ec, last, chainID, height, keys, check, nil)
}

// verifyCommit is Check; with prune set, a vote whose extension does not
// verify (or that carries one without being for the block) is pruned
// (prune(i)) and counts as absent instead of failing the commit.
func verifyCommit(ec abci.ExtendedCommitInfo, last abci.CommitInfo, chainID string, height int64, keys KeyLookup, check ExtensionCheck,
	prune func(i int),
) (Signed, error) {
	if ec.Round != last.Round || len(ec.Votes) != len(last.Votes) {
		return Signed{}, errors.New("extended commit does not match the last commit")
	}
	s := Signed{Votes: make([]aggregate.Vote, 0, len(ec.Votes)), Service: make([]service.Vote, 0, len(ec.Votes))}
	seen := make(map[string]struct{}, len(ec.Votes))
	var scratch []byte // sign bytes, one vote's at a time
	for i, v := range ec.Votes {
		lv := last.Votes[i]
		if !bytes.Equal(v.Validator.Address, lv.Validator.Address) || v.Validator.Power != lv.Validator.Power ||
			v.BlockIdFlag != lv.BlockIdFlag {
			return Signed{}, fmt.Errorf("vote %d does not match the last commit", i)
		}
		if _, dup := seen[string(v.Validator.Address)]; dup {
			return Signed{}, fmt.Errorf("validator %X appears twice", v.Validator.Address)
		}
		seen[string(v.Validator.Address)] = struct{}{}
		if i > 0 && !votesOrdered(ec.Votes[i-1], v) {
			return Signed{}, errors.New("votes are not ordered by power, then address")
		}
		if v.Validator.Power <= 0 || s.TotalPower > (1<<62)-v.Validator.Power {
			return Signed{}, fmt.Errorf("vote %d: bad power %d", i, v.Validator.Power)
		}
		s.TotalPower += v.Validator.Power
		checked, counts, err := verifyVote(v, chainID, height, ec.Round, keys, check, &scratch)
		switch {
		case err != nil && prune != nil:
			prune(i)
			continue
		case err != nil:
			return Signed{}, fmt.Errorf("vote %d: %w", i, err)
		case !counts:
			continue // absent, nil, or pruned by the proposer
		}
		s.ValidPower += v.Validator.Power
		s.Votes = append(s.Votes, aggregate.Vote{Power: v.Validator.Power, Verdicts: checked.Verdicts, Abstain: checked.Abstains})
		s.Service = append(s.Service, service.Vote{Power: v.Validator.Power, Reports: checked.Service, Checked: checked.Reports})
	}
	if s.TotalPower == 0 || s.ValidPower < s.TotalPower*2/3+1 {
		return Signed{}, fmt.Errorf("valid extensions hold %d of %d power, need more than 2/3", s.ValidPower, s.TotalPower)
	}
	return s, nil
}

// votesOrdered: CometBFT orders votes by power descending, then address.
func votesOrdered(a, b abci.ExtendedVoteInfo) bool {
	if a.Validator.Power != b.Validator.Power {
		return a.Validator.Power > b.Validator.Power
	}
	return bytes.Compare(a.Validator.Address, b.Validator.Address) < 0
}

// CommitInfoOf is the plain commit info of an extended one (for the
// proposer, whose request carries only the extended commit).
func CommitInfoOf(ec abci.ExtendedCommitInfo) abci.CommitInfo {
	ci := abci.CommitInfo{Round: ec.Round, Votes: make([]abci.VoteInfo, len(ec.Votes))}
	for i, v := range ec.Votes {
		ci.Votes[i] = abci.VoteInfo{Validator: v.Validator, BlockIdFlag: v.BlockIdFlag}
	}
	return ci
}
