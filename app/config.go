package app

import (
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
// Called from init so that every binary and test that links the app agrees.
func SetAddressPrefixes() {
	cfg := sdk.GetConfig()
	cfg.SetBech32PrefixForAccount(AccountAddressPrefix, AccountAddressPrefix+sdk.PrefixPublic)
	cfg.SetBech32PrefixForValidator(AccountAddressPrefix+sdk.PrefixValidator+sdk.PrefixOperator,
		AccountAddressPrefix+sdk.PrefixValidator+sdk.PrefixOperator+sdk.PrefixPublic)
	cfg.SetBech32PrefixForConsensusNode(AccountAddressPrefix+sdk.PrefixValidator+sdk.PrefixConsensus,
		AccountAddressPrefix+sdk.PrefixValidator+sdk.PrefixConsensus+sdk.PrefixPublic)
}
