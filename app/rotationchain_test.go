package app

import (
	"bytes"
	"encoding/json"
	"math/rand"
	"slices"
	"testing"
	"time"

	"cosmossdk.io/log/v2"
	sdkmath "cosmossdk.io/math"
	abci "github.com/cometbft/cometbft/abci/types"
	cmted25519 "github.com/cometbft/cometbft/crypto/ed25519"
	cryptoenc "github.com/cometbft/cometbft/crypto/encoding"
	cmtproto "github.com/cometbft/cometbft/proto/tendermint/types"
	cmttypes "github.com/cometbft/cometbft/types"
	dbm "github.com/cosmos/cosmos-db"
	"github.com/stretchr/testify/require"

	"github.com/cosmos/cosmos-sdk/baseapp"
	codectypes "github.com/cosmos/cosmos-sdk/codec/types"
	cryptocodec "github.com/cosmos/cosmos-sdk/crypto/codec"
	"github.com/cosmos/cosmos-sdk/crypto/keys/secp256k1"
	simtestutil "github.com/cosmos/cosmos-sdk/testutil/sims"
	sdk "github.com/cosmos/cosmos-sdk/types"
	authtypes "github.com/cosmos/cosmos-sdk/x/auth/types"
	banktypes "github.com/cosmos/cosmos-sdk/x/bank/types"
	stakingtypes "github.com/cosmos/cosmos-sdk/x/staking/types"

	"github.com/inferenced/inferenced/abci/proposals"
	"github.com/inferenced/inferenced/abci/ve"
)

const rotationChainID = "rotation-test"

// rotationChain is an in-process app driven block by block as CometBFT
// would drive it, with CometBFT's validator sets modelled from the
// validator updates each FinalizeBlock returns: the updates of block h
// take effect at h+2 (sets[h+2] is sets[h+1] with them applied).
type rotationChain struct {
	t    *testing.T
	app  *App
	ops  []*secp256k1.PrivKey // validator k's operator account
	seqs []uint64
	// keys is every consensus key in play (before and after rotations), by
	// address; sets the validators (address -> power) that sign each height.
	keys   map[string]cmted25519.PrivKey
	sets   map[int64]map[string]int64
	height int64 // last committed
	start  time.Time
}

// consKey is validator k's deterministic consensus key number gen (0: its
// genesis key).
func consKey(k, gen int) cmted25519.PrivKey {
	return cmted25519.GenPrivKeyFromSecret([]byte{byte(k), byte(gen), 'c'})
}

func addrOf(key cmted25519.PrivKey) string { return string(key.PubKey().Address()) }

// newRotationChain starts a chain of validators with the given powers
// (their genesis keys consKey(k, 0)), at most maxValidators of them bonded.
func newRotationChain(t *testing.T, powers []int64, maxValidators uint32) *rotationChain {
	t.Helper()
	c := &rotationChain{t: t, keys: map[string]cmted25519.PrivKey{}, sets: map[int64]map[string]int64{},
		start: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)}
	c.app = newRotationApp(t)
	cdc := c.app.AppCodec()
	gen := c.app.DefaultGenesis()
	stakingGen := stakingtypes.DefaultGenesisState()
	stakingGen.Params.MaxValidators = maxValidators
	denom := stakingGen.Params.BondDenom
	var accounts []authtypes.GenesisAccount
	var balances []banktypes.Balance
	supply, bonded := sdk.NewCoins(), sdkmath.ZeroInt()
	for k, power := range powers {
		op := secp256k1.GenPrivKeyFromSecret([]byte{byte(k), 'o'})
		c.ops, c.seqs = append(c.ops, op), append(c.seqs, 0)
		cons := consKey(k, 0)
		c.keys[addrOf(cons)] = cons
		accAddr := sdk.AccAddress(op.PubKey().Address())
		valAddr, err := c.app.StakingKeeper.ValidatorAddressCodec().BytesToString(accAddr)
		require.NoError(t, err)
		pk, err := cryptocodec.FromCmtPubKeyInterface(cons.PubKey())
		require.NoError(t, err)
		pkAny, err := codectypes.NewAnyWithValue(pk)
		require.NoError(t, err)
		tokens := sdk.TokensFromConsensusPower(power, sdk.DefaultPowerReduction)
		stakingGen.Validators = append(stakingGen.Validators, stakingtypes.Validator{
			OperatorAddress: valAddr, ConsensusPubkey: pkAny, Status: stakingtypes.Unbonded, Tokens: tokens,
			DelegatorShares: sdkmath.LegacyNewDecFromInt(tokens), MinSelfDelegation: sdkmath.OneInt(),
			Commission: stakingtypes.NewCommission(sdkmath.LegacyZeroDec(), sdkmath.LegacyZeroDec(), sdkmath.LegacyZeroDec()),
		})
		stakingGen.Delegations = append(stakingGen.Delegations,
			stakingtypes.NewDelegation(accAddr.String(), valAddr, sdkmath.LegacyNewDecFromInt(tokens)))
		accounts = append(accounts, authtypes.NewBaseAccount(accAddr, nil, uint64(k), 0))
		// Enough for the rotation fee (1,000,000) and a delegation.
		liquid := sdk.NewCoins(sdk.NewCoin(denom, sdkmath.NewInt(100_000_000)))
		balances = append(balances, banktypes.Balance{Address: accAddr.String(), Coins: liquid})
		supply, bonded = supply.Add(liquid...), bonded.Add(tokens)
	}
	// Genesis validators start unbonded (their tokens in the not-bonded
	// pool): InitGenesis bonds them, so slashing and distribution set them
	// up through their hooks as for validators made by transactions.
	notBonded := sdk.NewCoins(sdk.NewCoin(denom, bonded))
	balances = append(balances, banktypes.Balance{Address: authtypes.NewModuleAddress(stakingtypes.NotBondedPoolName).String(), Coins: notBonded})
	gen[authtypes.ModuleName] = cdc.MustMarshalJSON(authtypes.NewGenesisState(authtypes.DefaultParams(), accounts))
	gen[banktypes.ModuleName] = cdc.MustMarshalJSON(banktypes.NewGenesisState(banktypes.DefaultGenesisState().Params, balances,
		supply.Add(notBonded...), nil, nil))
	gen[stakingtypes.ModuleName] = cdc.MustMarshalJSON(stakingGen)
	state, err := json.Marshal(gen)
	require.NoError(t, err)
	c.initChain(&abci.RequestInitChain{ChainId: rotationChainID, InitialHeight: 1, Time: c.start,
		AppStateBytes: state, ConsensusParams: rotationConsensusParams()})
	return c
}

func newRotationApp(t *testing.T) *App {
	t.Helper()
	a, err := New(log.NewNopLogger(), dbm.NewMemDB(), true, simtestutil.NewAppOptionsWithFlagHome(t.TempDir()),
		baseapp.SetChainID(rotationChainID))
	require.NoError(t, err)
	return a
}

// rotationConsensusParams: vote extensions off (the test verifies the
// votes itself), ed25519 keys.
func rotationConsensusParams() *cmtproto.ConsensusParams {
	return &cmtproto.ConsensusParams{
		Block:     &cmtproto.BlockParams{MaxBytes: 1 << 20, MaxGas: -1},
		Evidence:  &cmtproto.EvidenceParams{MaxAgeNumBlocks: 100, MaxAgeDuration: time.Hour, MaxBytes: 10000},
		Validator: &cmtproto.ValidatorParams{PubKeyTypes: []string{cmttypes.ABCIPubKeyTypeEd25519}},
	}
}

// initChain runs InitChain: its validators sign the initial height and the
// next.
func (c *rotationChain) initChain(req *abci.RequestInitChain) {
	c.t.Helper()
	res, err := c.app.InitChain(req)
	require.NoError(c.t, err)
	vals := res.Validators
	if len(vals) == 0 {
		vals = req.Validators
	}
	set := c.apply(map[string]int64{}, vals)
	c.height = req.InitialHeight - 1
	c.sets[req.InitialHeight], c.sets[req.InitialHeight+1] = set, set
}

// apply is set with CometBFT's validator updates applied.
func (c *rotationChain) apply(set map[string]int64, updates []abci.ValidatorUpdate) map[string]int64 {
	c.t.Helper()
	out := map[string]int64{}
	for a, p := range set {
		out[a] = p
	}
	for _, u := range updates {
		pk, err := cryptoenc.PubKeyFromProto(u.PubKey)
		require.NoError(c.t, err)
		a := string(pk.Address())
		_, known := c.keys[a]
		require.True(c.t, known, "an update for a key the test never made: %X", pk.Address())
		if u.Power == 0 {
			delete(out, a)
		} else {
			out[a] = u.Power
		}
	}
	return out
}

// block finalizes and commits the next block with txs; its last commit is
// every vote of the set that signed the height before.
func (c *rotationChain) block(txs ...[]byte) {
	c.t.Helper()
	h := c.height + 1
	var last abci.CommitInfo
	if prev, ok := c.sets[h-1]; ok {
		for _, v := range c.votes(h-1, prev) {
			last.Votes = append(last.Votes, abci.VoteInfo{Validator: v.Validator, BlockIdFlag: cmtproto.BlockIDFlagCommit})
		}
	}
	res, err := c.app.FinalizeBlock(&abci.RequestFinalizeBlock{Height: h, Time: c.start.Add(time.Duration(h) * time.Second),
		Txs: txs, DecidedLastCommit: last, ProposerAddress: []byte(c.sortedAddrs(c.sets[h])[0])})
	require.NoError(c.t, err, "block %d", h)
	for k, tx := range res.TxResults {
		require.Zero(c.t, tx.Code, "block %d tx %d: %s", h, k, tx.Log)
	}
	_, err = c.app.Commit()
	require.NoError(c.t, err)
	c.sets[h+2] = c.apply(c.sets[h+1], res.ValidatorUpdates)
	c.height = h
}

func (c *rotationChain) sortedAddrs(set map[string]int64) []string {
	addrs := make([]string, 0, len(set))
	for a := range set {
		addrs = append(addrs, a)
	}
	slices.SortFunc(addrs, func(a, b string) int {
		if set[a] != set[b] {
			return int(set[b] - set[a]) // power, descending
		}
		return bytes.Compare([]byte(a), []byte(b))
	})
	return addrs
}

// votes is the extended commit of height h by set, in CometBFT's order,
// each extension signed by its key over CometBFT's own sign bytes.
func (c *rotationChain) votes(h int64, set map[string]int64) []abci.ExtendedVoteInfo {
	c.t.Helper()
	var out []abci.ExtendedVoteInfo
	for _, a := range c.sortedAddrs(set) {
		ext := []byte("health")
		sig, err := c.keys[a].Sign(cmttypes.VoteExtensionSignBytes(rotationChainID, &cmtproto.Vote{Height: h, Extension: ext}))
		require.NoError(c.t, err)
		out = append(out, abci.ExtendedVoteInfo{Validator: abci.Validator{Address: []byte(a), Power: set[a]},
			VoteExtension: ext, ExtensionSignature: sig, BlockIdFlag: cmtproto.BlockIDFlagCommit})
	}
	return out
}

// tx signs msg by validator k's operator.
func (c *rotationChain) tx(k int, msg sdk.Msg) []byte {
	c.t.Helper()
	tx, err := simtestutil.GenSignedMockTx(rand.New(rand.NewSource(int64(k))), c.app.TxConfig(), []sdk.Msg{msg}, sdk.Coins{},
		1_000_000, rotationChainID, []uint64{uint64(k)}, []uint64{c.seqs[k]}, c.ops[k])
	require.NoError(c.t, err)
	c.seqs[k]++
	bz, err := c.app.TxConfig().TxEncoder()(tx)
	require.NoError(c.t, err)
	return bz
}

func (c *rotationChain) valAddr(k int) string {
	c.t.Helper()
	s, err := c.app.StakingKeeper.ValidatorAddressCodec().BytesToString(c.ops[k].PubKey().Address())
	require.NoError(c.t, err)
	return s
}

// rotate is validator k's MsgRotateConsPubKey to key (registered as in
// play).
func (c *rotationChain) rotate(k int, key cmted25519.PrivKey) []byte {
	c.t.Helper()
	c.keys[addrOf(key)] = key
	pk, err := cryptocodec.FromCmtPubKeyInterface(key.PubKey())
	require.NoError(c.t, err)
	msg, err := stakingtypes.NewMsgRotateConsPubKey(c.valAddr(k), pk)
	require.NoError(c.t, err)
	return c.tx(k, msg)
}

// lookup is consensusKeys on the state committed after height h: what
// PrepareProposal and ProcessProposal of block h+1 verify h's votes with.
func (c *rotationChain) lookup(h int64) proposals.KeyLookup {
	c.t.Helper()
	ctx, err := c.app.CreateQueryContext(h, false)
	require.NoError(c.t, err)
	return c.app.consensusKeys(ctx)
}

var anyExtension = func([]byte) (ve.Checked, error) { return ve.Checked{}, nil }

// checkHeight verifies, against the state after h, the extended commit of
// h by the set CometBFT had sign it: every key the lookup returns is the
// one that signed, and proposals.Check counts every vote.
func (c *rotationChain) checkHeight(h int64) {
	c.t.Helper()
	lookup := c.lookup(h)
	for a := range c.sets[h] {
		key, err := lookup([]byte(a))
		require.NoError(c.t, err, "height %d: no key for %X, which signed it", h, []byte(a))
		require.True(c.t, key.Equals(c.keys[a].PubKey()), "height %d: %X looked up to another key", h, []byte(a))
	}
	ec := abci.ExtendedCommitInfo{Votes: c.votes(h, c.sets[h])}
	signed, err := proposals.Check(ec, proposals.CommitInfoOf(ec), rotationChainID, h, lookup, anyExtension)
	require.NoError(c.t, err, "height %d", h)
	require.Equal(c.t, signed.TotalPower, signed.ValidPower, "height %d: every vote counts", h)
}

// refused asserts that key's vote for h under its address does not verify
// against the state after h: a key that did not sign h is never found.
func (c *rotationChain) refused(h int64, key cmted25519.PrivKey) {
	c.t.Helper()
	_, err := c.lookup(h)(key.PubKey().Address())
	require.Error(c.t, err, "height %d: %X found, but it did not sign", h, key.PubKey().Address())
	ec := abci.ExtendedCommitInfo{Votes: c.votes(h, map[string]int64{addrOf(key): 1})}
	_, err = proposals.Check(ec, proposals.CommitInfoOf(ec), rotationChainID, h, c.lookup(h), anyExtension)
	require.Error(c.t, err, "height %d: a vote by %X verified", h, key.PubKey().Address())
}

// signs reports whether key is in the set that signs h.
func (c *rotationChain) signs(h int64, key cmted25519.PrivKey) bool {
	_, ok := c.sets[h][addrOf(key)]
	return ok
}
