package localnet

import (
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	abci "github.com/cometbft/cometbft/abci/types"
	cmtcrypto "github.com/cometbft/cometbft/crypto"
	"github.com/cometbft/cometbft/crypto/ed25519"
	cmtproto "github.com/cometbft/cometbft/proto/tendermint/types"
	cmttypes "github.com/cometbft/cometbft/types"
	"github.com/cosmos/cosmos-sdk/types/bech32"

	"github.com/inferenced/inferenced/abci/proposals"
	"github.com/inferenced/inferenced/abci/ve"
)

// KeepMonitor is the Join option (scripts/localnet-join.sh's JOIN_MONITOR)
// that keeps the joined node's health monitor on, configured as a
// validator's, for a node that is to sign for a validator (a consensus key
// rotation to its key): the monitor starts on its first vote extension
// (monitor.Lazy), which abstains, and it attests from the next.
const KeepMonitor = "JOIN_MONITOR=on"

// chainID is the localnet's (scripts/localnet.sh CHAIN_ID).
const chainID = "inferenced-local"

// ConsPubKey is node i's consensus public key in the SDK's JSON
// (`comet show-validator`), what MsgRotateConsPubKey takes.
func (n *Net) ConsPubKey(i int) string {
	n.t.Helper()
	out, err := n.CLI("comet", "show-validator", "--home", n.NodeHome(i))
	if err != nil {
		n.t.Fatal(err)
	}
	return strings.TrimSpace(out)
}

// Rotation is a consensus key rotation as the chain recorded it (the
// rotate_cons_pubkey event of its transaction).
type Rotation struct {
	TxHash      string
	TxHeight    int64 // the block that carried the transaction
	ApplyHeight int64 // the block whose EndBlock swaps the key in staking
	Validator   string
	// OldCons, NewCons are the bech32 consensus addresses; Old, New the
	// same in CometBFT's upper hex.
	OldCons, NewCons, Old, New string
	FeeBurned                  string
}

// SendRotation signs and broadcasts operator key from's
// MsgRotateConsPubKey to pubKey (ConsPubKey) and returns its hash once
// the mempool has accepted it (not yet in a block: AwaitRotation).
func (n *Net) SendRotation(from, pubKey string) string {
	n.t.Helper()
	raw, err := n.CLI("tx", "staking", "rotate-cons-pub-key", pubKey, "--from", from, "--keyring-backend", "test",
		"--keyring-dir", n.KeysDir, "--chain-id", chainID, "--node", n.RPCAddr(), "--yes", "--output", "json",
		"--gas", "400000")
	if err != nil {
		n.t.Fatal(err)
	}
	var res struct {
		Code   uint32 `json:"code"`
		TxHash string `json:"txhash"`
		RawLog string `json:"raw_log"`
	}
	if err := json.Unmarshal([]byte(raw), &res); err != nil || res.Code != 0 {
		n.t.Fatalf("rotate-cons-pub-key refused: code %d %s (%v): %s", res.Code, res.RawLog, err, raw)
	}
	return res.TxHash
}

// AwaitRotation waits up to timeout for the rotation sent as hash to be
// committed, fails the test if it failed, and returns it.
func (n *Net) AwaitRotation(hash string, timeout time.Duration) Rotation {
	n.t.Helper()
	var tx struct {
		Height string      `json:"height"`
		Code   uint32      `json:"code"`
		RawLog string      `json:"raw_log"`
		Events []abciEvent `json:"events"`
	}
	n.Eventually("rotation "+hash+" committed", timeout, func() error {
		raw, err := n.CLI("q", "tx", hash, "--node", n.RPCAddr(), "--output", "json")
		if err != nil {
			return err
		}
		return json.Unmarshal([]byte(raw), &tx)
	})
	if tx.Code != 0 {
		n.t.Fatalf("rotation %s failed: code %d: %s", hash, tx.Code, tx.RawLog)
	}
	attrs := map[string]string{}
	for _, ev := range tx.Events {
		if ev.Type == "rotate_cons_pubkey" {
			for _, a := range ev.Attributes {
				attrs[a.Key] = a.Value
			}
		}
	}
	r := Rotation{TxHash: hash, TxHeight: Atoi(n.t, tx.Height), ApplyHeight: Atoi(n.t, attrs["apply_height"]),
		Validator: attrs["validator"], OldCons: attrs["old_cons_addr"], NewCons: attrs["new_cons_addr"], FeeBurned: attrs["fee_burned"]}
	var err error
	if r.Old, err = hexOfBech32(r.OldCons); err != nil {
		n.t.Fatalf("rotation event %v: %v", attrs, err)
	}
	if r.New, err = hexOfBech32(r.NewCons); err != nil {
		n.t.Fatalf("rotation event %v: %v", attrs, err)
	}
	return r
}

func hexOfBech32(addr string) (string, error) {
	_, bz, err := bech32.DecodeAndConvert(addr)
	if err != nil {
		return "", fmt.Errorf("address %q: %w", addr, err)
	}
	return strings.ToUpper(hex.EncodeToString(bz)), nil
}

// SetMember is a validator of CometBFT's set at a height.
type SetMember struct {
	Addr   string // upper hex
	PubKey cmtcrypto.PubKey
	Power  int64
}

// ValidatorSet is the set that signs height h, in CometBFT's order (that
// of h's commit signatures), as node i's CometBFT keeps it: the keys
// consensus used, whatever the app's state says.
func (n *Net) ValidatorSet(i int, h int64) ([]SetMember, error) {
	var res struct {
		Result struct {
			Validators []struct {
				Address string `json:"address"`
				PubKey  struct {
					Type  string `json:"type"`
					Value string `json:"value"`
				} `json:"pub_key"`
				Power string `json:"voting_power"`
			} `json:"validators"`
		} `json:"result"`
	}
	if err := n.GetJSON(fmt.Sprintf("%s/validators?height=%d&per_page=100", n.RPC(i), h), &res); err != nil {
		return nil, err
	}
	out := make([]SetMember, len(res.Result.Validators))
	for k, v := range res.Result.Validators {
		key, err := base64.StdEncoding.DecodeString(v.PubKey.Value)
		if err != nil || !strings.Contains(v.PubKey.Type, "Ed25519") || len(key) != ed25519.PubKeySize {
			return nil, fmt.Errorf("validator %s at %d: key %s %q", v.Address, h, v.PubKey.Type, v.PubKey.Value)
		}
		power, err := strconv.ParseInt(v.Power, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("validator %s at %d: power %q", v.Address, h, v.Power)
		}
		out[k] = SetMember{Addr: strings.ToUpper(v.Address), PubKey: ed25519.PubKey(key), Power: power}
	}
	return out, nil
}

// lastCommit is block h's last commit as node 0 serves it.
type lastCommit struct {
	Height     string `json:"height"`
	Round      int32  `json:"round"`
	Signatures []struct {
		Flag    int32  `json:"block_id_flag"` // cmtproto.BlockIDFlag
		Address string `json:"validator_address"`
	} `json:"signatures"`
}

func (n *Net) lastCommit(h int64) (lastCommit, error) {
	var res struct {
		Result struct {
			Block struct {
				LastCommit lastCommit `json:"last_commit"`
			} `json:"block"`
		} `json:"result"`
	}
	err := n.GetJSON(fmt.Sprintf("%s/block?height=%d", n.RPC(0), h), &res)
	return res.Result.Block.LastCommit, err
}

// CommitSigners is the validators (upper hex) whose votes for block h the
// chain committed (block h+1's last commit, flag commit).
func (n *Net) CommitSigners(h int64) ([]string, error) {
	lc, err := n.lastCommit(h + 1)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, s := range lc.Signatures {
		if cmtproto.BlockIDFlag(s.Flag) == cmtproto.BlockIDFlagCommit {
			out = append(out, strings.ToUpper(s.Address))
		}
	}
	return out, nil
}

// BundleCheck is block h's health bundle verified again outside the chain:
// each extension's signature against the key CometBFT's own set held for
// its validator at h-1 (ValidatorSet), over CometBFT's own sign bytes
// (types.VoteExtensionSignBytes), then the whole commit through the app's
// proposals.Check with those keys.
type BundleCheck struct {
	Height                 int64
	ValidPower, TotalPower int64
	// Counted is the validators (upper hex) whose extension verified, with
	// their power; Attested those of them whose extension is not empty;
	// Pruned those whose vote is for the block but carries no extension
	// (the proposer pruned it: a signature or extension it could not
	// verify), unlike a vote that came too late (absent).
	Counted  map[string]int64
	Attested map[string]bool
	Pruned   []string
}

// CheckBundle verifies block h's health bundle (BundleCheck); an error says
// what did not verify, including valid extensions from 2/3 of the power
// or less.
func (n *Net) CheckBundle(h int64) (BundleCheck, error) {
	lc, err := n.lastCommit(h)
	if err != nil {
		return BundleCheck{}, err
	}
	set, err := n.ValidatorSet(0, h-1)
	if err != nil {
		return BundleCheck{}, err
	}
	if len(set) != len(lc.Signatures) {
		return BundleCheck{}, fmt.Errorf("block %d: %d commit signatures for a set of %d", h, len(lc.Signatures), len(set))
	}
	info := abci.CommitInfo{Round: lc.Round, Votes: make([]abci.VoteInfo, len(set))}
	keys := map[string]cmtcrypto.PubKey{}
	for k, m := range set {
		flag := cmtproto.BlockIDFlag(lc.Signatures[k].Flag)
		if s := lc.Signatures[k]; flag != cmtproto.BlockIDFlagAbsent && !strings.EqualFold(s.Address, m.Addr) {
			return BundleCheck{}, fmt.Errorf("block %d: commit signature %d by %s, the set has %s", h, k, s.Address, m.Addr)
		}
		addr, _ := hex.DecodeString(m.Addr)
		info.Votes[k] = abci.VoteInfo{Validator: abci.Validator{Address: addr, Power: m.Power}, BlockIdFlag: flag}
		keys[string(addr)] = m.PubKey
	}
	b, found, err := proposals.Find(n.BlockTxs(h))
	if !found || err != nil {
		return BundleCheck{}, fmt.Errorf("block %d: no health bundle (found %v, %v)", h, found, err)
	}
	ec, err := b.Commit(info)
	if err != nil {
		return BundleCheck{}, fmt.Errorf("block %d: %w", h, err)
	}
	c := BundleCheck{Height: h, Counted: map[string]int64{}, Attested: map[string]bool{}}
	for k, v := range ec.Votes {
		c.TotalPower += v.Validator.Power
		if len(v.ExtensionSignature) == 0 {
			if v.BlockIdFlag == cmtproto.BlockIDFlagCommit {
				c.Pruned = append(c.Pruned, set[k].Addr)
			}
			continue
		}
		sb := cmttypes.VoteExtensionSignBytes(chainID, &cmtproto.Vote{Height: h - 1, Round: ec.Round, Extension: v.VoteExtension})
		if !set[k].PubKey.VerifySignature(sb, v.ExtensionSignature) {
			return BundleCheck{}, fmt.Errorf("block %d: %s's extension does not verify with its key at %d", h, set[k].Addr, h-1)
		}
		c.ValidPower += v.Validator.Power
		c.Counted[set[k].Addr] = v.Validator.Power
		c.Attested[set[k].Addr] = len(v.VoteExtension) > 0
	}
	lookup := func(addr []byte) (cmtcrypto.PubKey, error) {
		if key, ok := keys[string(addr)]; ok {
			return key, nil
		}
		return nil, fmt.Errorf("%X not in the set at %d", addr, h-1)
	}
	anyExtension := func([]byte) (ve.Checked, error) { return ve.Checked{}, nil }
	signed, err := proposals.Check(ec, info, chainID, h-1, lookup, anyExtension)
	if err != nil {
		return c, fmt.Errorf("block %d: proposals.Check: %w", h, err)
	}
	if signed.ValidPower != c.ValidPower || signed.TotalPower != c.TotalPower {
		return c, fmt.Errorf("block %d: proposals.Check counts %d of %d, CometBFT's keys %d of %d",
			h, signed.ValidPower, signed.TotalPower, c.ValidPower, c.TotalPower)
	}
	return c, nil
}

// VotingPower is node i's own validator's power as its /status says (0: a
// full node).
func (n *Net) VotingPower(i int) (int64, error) {
	var st struct {
		Result struct {
			Validator struct {
				Power string `json:"voting_power"`
			} `json:"validator_info"`
		} `json:"result"`
	}
	if err := n.GetJSON(n.RPC(i)+"/status", &st); err != nil {
		return 0, err
	}
	return strconv.ParseInt(st.Result.Validator.Power, 10, 64)
}

// CopyConsensusKey gives stopped node to node from's consensus key (its
// priv_validator_key.json): the operator moving a validator's key between
// its machines, never both running with it.
func (n *Net) CopyConsensusKey(from, to int) {
	n.t.Helper()
	key := filepath.Join("config", "priv_validator_key.json")
	bz, err := os.ReadFile(filepath.Join(n.NodeHome(from), key))
	if err == nil {
		err = os.WriteFile(filepath.Join(n.NodeHome(to), key), bz, 0o600)
	}
	if err != nil {
		n.t.Fatalf("copy node %d's consensus key to node %d: %v", from, to, err)
	}
}
