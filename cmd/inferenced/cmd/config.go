package cmd

import (
	cmtcfg "github.com/cometbft/cometbft/config"

	serverconfig "github.com/cosmos/cosmos-sdk/server/config"
)

// initCometConfig returns CometBFT's defaults; the localnet script shortens
// the block time in config.toml.
func initCometConfig() *cmtcfg.Config {
	return cmtcfg.DefaultConfig()
}

// initAppConfig sets a non-zero minimum gas price so that a node does not
// accept free transactions by accident (the localnet sets zero on purpose).
func initAppConfig() (string, interface{}) {
	cfg := serverconfig.DefaultConfig()
	cfg.MinGasPrices = "0.001stake"
	return serverconfig.DefaultConfigTemplate, cfg
}
