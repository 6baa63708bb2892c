package app

import (
	"testing"
	"time"

	abci "github.com/cometbft/cometbft/abci/types"
	cmted25519 "github.com/cometbft/cometbft/crypto/ed25519"
	cryptoenc "github.com/cometbft/cometbft/crypto/encoding"
	cmtproto "github.com/cometbft/cometbft/proto/tendermint/types"
	"github.com/stretchr/testify/require"

	codectypes "github.com/cosmos/cosmos-sdk/codec/types"
	cryptocodec "github.com/cosmos/cosmos-sdk/crypto/codec"
	sdk "github.com/cosmos/cosmos-sdk/types"
	stakingtypes "github.com/cosmos/cosmos-sdk/x/staking/types"
)

// The seam between consensus key rotation (x/staking, SDK v0.55) and the
// check of vote extensions: consensusKeys looks each voter's key up by the
// consensus address CometBFT names it with, in the state committed after
// the voted height (PrepareProposal and ProcessProposal of block H verify
// the votes of H-1 on the state after H-1).
//
// A rotation submitted in block S is scheduled for S+2
// (stakingtypes.ConsensusUpdateDelay). EndBlock S returns old@0, new@power,
// which CometBFT applies two heights on: the old key signs S and S+1, the
// new one S+2 on. Staking swaps the validator's ConsensusPubkey and its
// by-consensus-address index in EndBlock S+2. So:
//
//	height  signed by  checked on the state after  which holds
//	S       old        S                           old (swap pending)
//	S+1     old        S+1                         old (swap pending)
//	S+2     new        S+2                         new (swapped in EndBlock S+2)
//	S+3     new        S+3                         new
//
// The state after H holds exactly the keys of the set that signed H, so
// the lookup needs no fallback to the rotation history (which keeps old
// addresses for evidence, never old keys), and a key that did not sign H
// is not found for it: the new key at S+1, the old one from S+2.
//
// The test drives the app as CometBFT would: CometBFT's sets are modelled
// from the validator updates FinalizeBlock returns (those of block h sign
// from h+2), every height's commit is signed by its set's keys over
// CometBFT's sign bytes and checked with proposals.Check against
// consensusKeys on the state after it. Validators 1 and 2 (bonded) and 4
// (not bonded: at most four are) rotate in the same block; validator 4
// bonds after its rotation applied, under its new key, and pushes
// validator 3 out.
func TestConsensusKeysFollowARotation(t *testing.T) {
	c := newRotationChain(t, []int64{40, 30, 20, 10, 5}, 4)
	for c.height < 2 {
		c.block()
	}
	s := c.height + 1
	old1, old2, old3, old4 := consKey(1, 0), consKey(2, 0), consKey(3, 0), consKey(4, 0)
	new1, new2, new4 := consKey(1, 1), consKey(2, 1), consKey(4, 1)
	c.block(c.rotate(1, new1), c.rotate(2, new2), c.rotate(4, new4))
	for c.height < s+3 {
		c.block()
	}
	delegation := stakingtypes.NewMsgDelegate(sdk.AccAddress(c.ops[4].PubKey().Address()).String(), c.valAddr(4),
		sdk.NewCoin(sdk.DefaultBondDenom, sdk.TokensFromConsensusPower(30, sdk.DefaultPowerReduction)))
	c.block(c.tx(4, delegation)) // S+4: validator 4 at 35, validator 3 (10) out
	for c.height < s+8 {
		c.block()
	}

	for _, r := range []struct {
		h            int64
		oldKey, newK bool
	}{{s, true, false}, {s + 1, true, false}, {s + 2, false, true}, {s + 3, false, true}} {
		for _, v := range [][2]int{{1, 1}, {2, 1}} {
			require.Equal(t, r.oldKey, c.signs(r.h, consKey(v[0], 0)), "validator %d's old key at %d", v[0], r.h)
			require.Equal(t, r.newK, c.signs(r.h, consKey(v[0], v[1])), "validator %d's new key at %d", v[0], r.h)
		}
	}
	for h := int64(1); h <= s+5; h++ {
		require.False(t, c.signs(h, old4) || c.signs(h, new4), "validator 4 unbonded at %d", h)
		require.True(t, c.signs(h, old3), "validator 3 at %d", h)
	}
	require.True(t, c.signs(s+6, new4), "validator 4 bonded in S+4 signs from S+6 with its new key")
	require.False(t, c.signs(s+6, old4) || c.signs(s+6, old3), "nor its old key nor validator 3 at S+6")

	for h := int64(1); h <= c.height; h++ {
		c.checkHeight(h)
	}
	// Keys that did not sign a height are not found for it: the new key
	// before S+2, the old one from S+2 on (its address looked up long
	// after, too), and validator 4's old key once swapped while unbonded.
	for _, k := range []struct {
		h   int64
		key cmted25519.PrivKey
	}{{s + 1, new1}, {s + 2, old1}, {s + 3, old1}, {s + 7, old1}, {s + 1, new2}, {s + 2, old2}, {s + 2, old4}} {
		c.refused(k.h, k.key)
	}
}

// A chain exported with rotations still pending, and restarted from the
// export (x/staking exports them; ExportPendingConsKeyRotations): one
// submitted in E-1, due at E+1 (the restarted chain's first block, I),
// and one submitted in E, due at E+2, whose old@0, new@power the old chain
// never applied. The export gives CometBFT validator 1's new key from I
// and validator 2's old one; the restarted chain swaps validator 1 in
// EndBlock I and moves validator 2's rotation to I+2, telling CometBFT in
// EndBlock I. The state after each height still holds the keys that
// signed it. InitChain also checks that the export's validators are the
// ones the imported staking state returns.
func TestConsensusKeysAcrossAnExportWithPendingRotations(t *testing.T) {
	c := newRotationChain(t, []int64{40, 30, 20, 10}, 4)
	for c.height < 2 {
		c.block()
	}
	old1, old2, new1, new2 := consKey(1, 0), consKey(2, 0), consKey(1, 1), consKey(2, 1)
	c.block(c.rotate(1, new1))
	c.block(c.rotate(2, new2))
	e := c.height
	exp, err := c.app.ExportAppStateAndValidators(false, nil, nil)
	require.NoError(t, err)
	require.Equal(t, e+1, exp.Height)
	var vals []abci.ValidatorUpdate
	for _, v := range exp.Validators {
		pk, err := cryptoenc.PubKeyToProto(v.PubKey)
		require.NoError(t, err)
		vals = append(vals, abci.ValidatorUpdate{PubKey: pk, Power: v.Power})
	}

	r := &rotationChain{t: t, app: newRotationApp(t), ops: c.ops, seqs: c.seqs, keys: c.keys, sets: map[int64]map[string]int64{}, start: c.start}
	cp := exp.ConsensusParams
	r.initChain(&abci.RequestInitChain{ChainId: rotationChainID, InitialHeight: exp.Height, Time: c.start.Add(time.Duration(e) * time.Second),
		AppStateBytes: exp.AppState, ConsensusParams: &cp, Validators: vals})
	i := exp.Height
	for r.height < i+4 {
		r.block()
	}
	require.True(t, r.signs(i, new1) && !r.signs(i, old1), "validator 1's new key from the first block")
	for h := i; h <= i+3; h++ {
		require.Equal(t, h < i+2, r.signs(h, old2), "validator 2's old key at %d", h)
		require.Equal(t, h >= i+2, r.signs(h, new2), "validator 2's new key at %d", h)
		r.checkHeight(h)
	}
	r.refused(i, old1)
	r.refused(i+1, new2)
	r.refused(i+2, old2)
}

// consensusKeys never lends a vote another key: a by-address index entry
// whose validator holds a key of another address (which staking never
// writes; made here by hand) is refused, not used to verify the vote.
func TestConsensusKeysRefuseAKeyOfAnotherAddress(t *testing.T) {
	c := newRotationChain(t, []int64{10}, 4)
	c.block()
	ctx := c.app.NewNextBlockContext(cmtproto.Header{Height: c.height + 1})
	v, err := c.app.StakingKeeper.GetValidator(ctx, sdk.ValAddress(c.ops[0].PubKey().Address()))
	require.NoError(t, err)
	stray := consKey(0, 9)
	pk, err := cryptocodec.FromCmtPubKeyInterface(stray.PubKey())
	require.NoError(t, err)
	indexed := v
	indexed.ConsensusPubkey, err = codectypes.NewAnyWithValue(pk)
	require.NoError(t, err)
	require.NoError(t, c.app.StakingKeeper.SetValidatorByConsAddr(ctx, indexed)) // stray's address -> validator 0

	_, err = c.app.consensusKeys(ctx)(stray.PubKey().Address())
	require.ErrorContains(t, err, "staking holds the key of")
	key, err := c.app.consensusKeys(ctx)(consKey(0, 0).PubKey().Address())
	require.NoError(t, err)
	require.True(t, key.Equals(consKey(0, 0).PubKey()))
}
