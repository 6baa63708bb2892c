package keeper

import (
	"fmt"

	"cosmossdk.io/collections"
	errorsmod "cosmossdk.io/errors"

	sdk "github.com/cosmos/cosmos-sdk/types"

	"github.com/inferenced/inferenced/x/inference/types"
)

// InferenceKey names an inference: its transfer agent's address bytes and
// its id. Ids are unique per agent, so no agent can take another's id.
type InferenceKey = collections.Pair[sdk.AccAddress, string]

// HeightKey is an inference at a height, (height, id, agent): the expiry
// queue's and the prune index's entries, ordered by height so a block
// walks exactly the due ones. Within a height the order is by id, as in
// version 3, then agent: the block's expiries reach the breaker in the
// same order as before, and an agent's address bytes (which an account
// can grind) never decide whose miss is applied first.
type HeightKey = collections.Triple[int64, string, sdk.AccAddress]

// The key codecs of the layout, written once: the keeper's collections and
// the version-3 migration build on them.
var (
	inferenceKeyCodec = collections.PairKeyCodec(sdk.AccAddressKey, collections.StringKey)
	heightKeyCodec    = collections.TripleKeyCodec(collections.Int64Key, collections.StringKey, sdk.AccAddressKey)
)

// NewInferenceKey is the store key of agent's inference id.
func NewInferenceKey(agent sdk.AccAddress, id string) InferenceKey {
	return collections.Join(agent, id)
}

// InferenceKeyOf is the store key of a stored inference, from its transfer
// agent's (canonical) address.
func (k Keeper) InferenceKeyOf(inf types.Inference) (InferenceKey, error) {
	agent, err := k.addressCodec.StringToBytes(inf.TransferAgent)
	if err != nil {
		return InferenceKey{}, fmt.Errorf("inference %q transfer agent %q: %w", inf.InferenceId, inf.TransferAgent, err)
	}
	return NewInferenceKey(agent, inf.InferenceId), nil
}

// NewHeightKey is the entry of key at height in the expiry queue or prune index.
func NewHeightKey(height int64, key InferenceKey) HeightKey {
	return collections.Join3(height, key.K2(), key.K1())
}

// keyOf is the inference key of an expiry-queue or prune-index entry.
func keyOf(h HeightKey) InferenceKey { return collections.Join(h.K3(), h.K2()) }

// spell is an address as errors show it: the module's bech32 spelling, or
// hex if it has none.
func (k Keeper) spell(a sdk.AccAddress) string {
	s, err := k.addressCodec.BytesToString(a)
	if err != nil {
		return fmt.Sprintf("%X", []byte(a))
	}
	return s
}

// transferAgentArg decodes the transfer agent a message or query names,
// with an error that says which field is wrong.
func (k Keeper) transferAgentArg(bech string) (sdk.AccAddress, error) {
	if bech == "" {
		return nil, errorsmod.Wrap(types.ErrInvalidInference,
			"transfer_agent is required: an inference id is unique per transfer agent, so the agent that started it names it")
	}
	bz, err := k.addressCodec.StringToBytes(bech)
	if err != nil {
		return nil, errorsmod.Wrapf(types.ErrInvalidInference, "transfer_agent %q is not an account address: %s", bech, err)
	}
	return bz, nil
}
