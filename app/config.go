package app

import (
	"github.com/cosmos/cosmos-sdk/codec/types"

	"github.com/inferenced/inferenced/app/chainconfig"
)

const (
	// Name is the application name.
	Name = chainconfig.Name
	// AccountAddressPrefix is the bech32 prefix of account addresses.
	AccountAddressPrefix = chainconfig.AccountAddressPrefix
)

// NewInterfaceRegistry builds the app's interface registry
// (chainconfig.NewInterfaceRegistry; linking app/ sets the prefixes).
func NewInterfaceRegistry() (types.InterfaceRegistry, error) {
	return chainconfig.NewInterfaceRegistry()
}
