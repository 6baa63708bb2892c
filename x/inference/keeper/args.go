package keeper

import (
	"fmt"

	errorsmod "cosmossdk.io/errors"

	sdk "github.com/cosmos/cosmos-sdk/types"

	"github.com/inferenced/inferenced/x/inference/types"
)

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
