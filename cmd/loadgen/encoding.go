package main

import (
	"github.com/cosmos/cosmos-sdk/client"
	"github.com/cosmos/cosmos-sdk/codec"
	"github.com/cosmos/cosmos-sdk/std"
	authtx "github.com/cosmos/cosmos-sdk/x/auth/tx"
	authtypes "github.com/cosmos/cosmos-sdk/x/auth/types"

	"github.com/inferenced/inferenced/app/chainconfig"
	"github.com/inferenced/inferenced/x/inference/types"
)

// encoding builds the codec and tx config for the types the driver sends
// and reads: accounts, keys and x/inference messages.
func encoding() (codec.Codec, client.TxConfig, error) {
	registry, err := chainconfig.NewInterfaceRegistry()
	if err != nil {
		return nil, nil, err
	}
	std.RegisterInterfaces(registry)
	authtypes.RegisterInterfaces(registry)
	types.RegisterInterfaces(registry)
	cdc := codec.NewProtoCodec(registry)
	return cdc, authtx.NewTxConfig(cdc, authtx.DefaultSignModes), nil
}
