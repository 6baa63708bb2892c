package cmd

import (
	cmtcfg "github.com/cometbft/cometbft/config"

	serverconfig "github.com/cosmos/cosmos-sdk/server/config"

	"github.com/inferenced/inferenced/monitor"
)

// initCometConfig returns CometBFT's defaults; the localnet script shortens
// the block time in config.toml.
func initCometConfig() *cmtcfg.Config {
	return cmtcfg.DefaultConfig()
}

// appConfig is app.toml: the SDK's sections and [health-monitor].
type appConfig struct {
	serverconfig.Config `mapstructure:",squash"`

	HealthMonitor monitor.Config `mapstructure:"health-monitor"`
}

// initAppConfig sets a non-zero minimum gas price so that a node does not
// accept free transactions by accident (the localnet sets zero on purpose),
// and adds the health monitor's section with its defaults.
func initAppConfig() (string, interface{}) {
	cfg := serverconfig.DefaultConfig()
	cfg.MinGasPrices = "0.001stake"
	return serverconfig.DefaultConfigTemplate + monitor.ConfigTemplate,
		appConfig{Config: *cfg, HealthMonitor: monitor.DefaultConfig()}
}
