// Package chainconfig is what a client of the chain needs without the app
// and its modules: the bech32 prefixes (set on load) and an interface
// registry. The load driver and the key generator link it instead of app/,
// whose SDK modules pull test-only packages (x/*/simulation imports
// testutil, rapid and gotest.tools) into a binary, with their flags
// (-rapid.*, -update) in its -h.
package chainconfig

import (
	"fmt"

	"github.com/cosmos/cosmos-sdk/x/tx/signing"
	"github.com/cosmos/gogoproto/proto"

	"github.com/cosmos/cosmos-sdk/codec/address"
	"github.com/cosmos/cosmos-sdk/codec/types"
	sdk "github.com/cosmos/cosmos-sdk/types"
)

const (
	// Name is the application name.
	Name = "inferenced"
	// AccountAddressPrefix is the bech32 prefix of account addresses.
	AccountAddressPrefix = "infer"
)

func init() {
	SetAddressPrefixes()
}

// SetAddressPrefixes sets the bech32 prefixes in the SDK's global config.
// Called from init so that every binary and test that links this package
// (the app does) agrees.
func SetAddressPrefixes() {
	cfg := sdk.GetConfig()
	cfg.SetBech32PrefixForAccount(AccountAddressPrefix, AccountAddressPrefix+sdk.PrefixPublic)
	cfg.SetBech32PrefixForValidator(AccountAddressPrefix+sdk.PrefixValidator+sdk.PrefixOperator,
		AccountAddressPrefix+sdk.PrefixValidator+sdk.PrefixOperator+sdk.PrefixPublic)
	cfg.SetBech32PrefixForConsensusNode(AccountAddressPrefix+sdk.PrefixValidator+sdk.PrefixConsensus,
		AccountAddressPrefix+sdk.PrefixValidator+sdk.PrefixConsensus+sdk.PrefixPublic)
}

// NewInterfaceRegistry builds an interface registry that resolves every
// gogoproto type and reads signers with this chain's bech32 prefixes.
func NewInterfaceRegistry() (types.InterfaceRegistry, error) {
	registry, err := types.NewInterfaceRegistryWithOptions(types.InterfaceRegistryOptions{
		ProtoFiles: proto.HybridResolver,
		SigningOptions: signing.Options{
			AddressCodec:          address.NewBech32Codec(sdk.GetConfig().GetBech32AccountAddrPrefix()),
			ValidatorAddressCodec: address.NewBech32Codec(sdk.GetConfig().GetBech32ValidatorAddrPrefix()),
		},
	})
	if err != nil {
		return nil, fmt.Errorf("interface registry: %w", err)
	}
	return registry, nil
}
