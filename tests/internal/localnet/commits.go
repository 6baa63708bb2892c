package localnet

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	sdkmath "cosmossdk.io/math"
	"github.com/cosmos/cosmos-sdk/types/bech32"

	"github.com/inferenced/inferenced/app/chainconfig"
)

// CometBFT's BlockIDFlag: how a validator is in a commit.
const (
	blockIDFlagAbsent = 1 // no precommit of its in the commit
	blockIDFlagCommit = 2 // its precommit for the block
	blockIDFlagNil    = 3 // its precommit for nil
)

// LastCommit is how each validator is in the commit that block h carries
// (the precommits for block h-1 that its proposer collected), and who
// proposed block h: upper-hex consensus addresses.
type LastCommit struct {
	Proposer string
	Signed   map[string]bool // a precommit for the block
	Nil      map[string]bool // a precommit for nil
}

// Absent says whether the validator with the upper-hex consensus address
// addr has no precommit in the commit: what x/slashing counts as a missed
// block (a nil precommit is signed).
func (c LastCommit) Absent(addr string) bool { return !c.Signed[addr] && !c.Nil[addr] }

// LastCommitOf reads block h's last commit from node 0.
func (n *Net) LastCommitOf(h int64) (LastCommit, error) {
	var res struct {
		Result struct {
			Block struct {
				Header struct {
					Proposer string `json:"proposer_address"`
				} `json:"header"`
				LastCommit struct {
					Signatures []struct {
						Flag    json.RawMessage `json:"block_id_flag"` // a number (or a quoted one)
						Address string          `json:"validator_address"`
					} `json:"signatures"`
				} `json:"last_commit"`
			} `json:"block"`
		} `json:"result"`
	}
	if err := n.GetJSON(fmt.Sprintf("%s/block?height=%d", n.RPC(0), h), &res); err != nil {
		return LastCommit{}, err
	}
	b := res.Result.Block
	c := LastCommit{Proposer: strings.ToUpper(b.Header.Proposer), Signed: map[string]bool{}, Nil: map[string]bool{}}
	for _, s := range b.LastCommit.Signatures {
		switch strings.Trim(string(s.Flag), `"`) {
		case strconv.Itoa(blockIDFlagCommit):
			c.Signed[strings.ToUpper(s.Address)] = true
		case strconv.Itoa(blockIDFlagNil):
			c.Nil[strings.ToUpper(s.Address)] = true
		case strconv.Itoa(blockIDFlagAbsent):
		default:
			return LastCommit{}, fmt.Errorf("block %d: commit signature flag %s", h, s.Flag)
		}
	}
	return c, nil
}

// SigningInfo is x/slashing's record of one consensus address's liveness.
type SigningInfo struct {
	StartHeight, IndexOffset string // as the REST answer writes them
	MissedBlocks             int64
	JailedUntil              time.Time
	Tombstoned               bool
}

// Jailed says whether the validator was ever jailed for downtime (a
// validator never jailed has the zero Unix time).
func (s SigningInfo) Jailed() bool { return s.JailedUntil.After(time.Unix(0, 0)) }

// SigningInfoAt is the signing info of consensus address addr, upper hex
// (as CometBFT names validators) or bech32 (as x/slashing does), as of the
// state committed at height (0: the latest), from node 0's REST; an
// address without one is an error.
func (n *Net) SigningInfoAt(addr string, height int64) (SigningInfo, error) {
	cons := addr
	if raw, err := hex.DecodeString(addr); err == nil {
		if cons, err = bech32.ConvertAndEncode(chainconfig.AccountAddressPrefix+"valcons", raw); err != nil {
			return SigningInfo{}, err
		}
	}
	var res struct {
		Info struct {
			StartHeight string    `json:"start_height"`
			IndexOffset string    `json:"index_offset"`
			Missed      string    `json:"missed_blocks_counter"`
			JailedUntil time.Time `json:"jailed_until"`
			Tombstoned  bool      `json:"tombstoned"`
		} `json:"val_signing_info"`
	}
	if err := getJSONAt(n.REST(0)+"/cosmos/slashing/v1beta1/signing_infos/"+cons, height, &res); err != nil {
		return SigningInfo{}, err
	}
	var missed int64
	if res.Info.Missed != "" {
		if _, err := fmt.Sscan(res.Info.Missed, &missed); err != nil {
			return SigningInfo{}, fmt.Errorf("missed_blocks_counter %q: %w", res.Info.Missed, err)
		}
	}
	return SigningInfo{StartHeight: res.Info.StartHeight, IndexOffset: res.Info.IndexOffset, MissedBlocks: missed,
		JailedUntil: res.Info.JailedUntil, Tombstoned: res.Info.Tombstoned}, nil
}

// SlashingParams is the part of x/slashing's params that decides jailing
// for downtime: a validator that misses more than MaxMissed of the last
// Window blocks is jailed.
type SlashingParams struct {
	Window, MaxMissed int64
	MinSigned         string // min_signed_per_window, a decimal
}

// Slashing reads x/slashing's params from node 0's REST.
func (n *Net) Slashing() (SlashingParams, error) {
	var res struct {
		Params struct {
			Window    string `json:"signed_blocks_window"`
			MinSigned string `json:"min_signed_per_window"`
		} `json:"params"`
	}
	if err := n.GetJSON(n.REST(0)+"/cosmos/slashing/v1beta1/params", &res); err != nil {
		return SlashingParams{}, err
	}
	var window int64
	if _, err := fmt.Sscan(res.Params.Window, &window); err != nil {
		return SlashingParams{}, fmt.Errorf("signed_blocks_window %q: %w", res.Params.Window, err)
	}
	signed, err := minSigned(res.Params.MinSigned, window)
	if err != nil {
		return SlashingParams{}, err
	}
	return SlashingParams{Window: window, MaxMissed: window - signed, MinSigned: res.Params.MinSigned}, nil
}

// minSigned is x/slashing's MinSignedPerWindow: the decimal fraction of
// window, rounded half to even (LegacyDec.RoundInt64), the SDK's own
// arithmetic.
func minSigned(dec string, window int64) (int64, error) {
	d, err := sdkmath.LegacyNewDecFromStr(dec)
	if err != nil {
		return 0, fmt.Errorf("min_signed_per_window %q: %w", dec, err)
	}
	return d.MulInt64(window).RoundInt64(), nil
}
