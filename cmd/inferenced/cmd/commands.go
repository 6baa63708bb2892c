package cmd

import (
	"cosmossdk.io/log/v2"
	confixcmd "cosmossdk.io/tools/confix/cmd"
	dbm "github.com/cosmos/cosmos-db"
	"github.com/spf13/cobra"

	"github.com/cosmos/cosmos-sdk/client"
	"github.com/cosmos/cosmos-sdk/client/debug"
	"github.com/cosmos/cosmos-sdk/client/keys"
	"github.com/cosmos/cosmos-sdk/client/pruning"
	"github.com/cosmos/cosmos-sdk/client/rpc"
	"github.com/cosmos/cosmos-sdk/client/snapshot"
	"github.com/cosmos/cosmos-sdk/server"
	servertypes "github.com/cosmos/cosmos-sdk/server/types"
	authcmd "github.com/cosmos/cosmos-sdk/x/auth/client/cli"
	genutilcli "github.com/cosmos/cosmos-sdk/x/genutil/client/cli"

	"github.com/inferenced/inferenced/app"
)

func initRootCmd(rootCmd *cobra.Command, tempApp *app.App) {
	basics := tempApp.BasicModuleManager
	rootCmd.AddCommand(
		genutilcli.InitCmd(basics, app.DefaultNodeHome),
		debug.Cmd(),
		confixcmd.ConfigCommand(),
		pruning.Cmd(newApp, app.DefaultNodeHome),
		snapshot.Cmd(newApp),
	)
	server.AddCommandsWithStartCmdOptions(rootCmd, app.DefaultNodeHome, newApp, exportApp, server.StartCmdOptions{})
	replaceCommand(rootCmd, exportCmd())

	genesisCmd := genutilcli.Commands(tempApp.TxConfig(), basics, app.DefaultNodeHome)
	genesisCmd.AddCommand(AddGenesisParticipantCmd(app.DefaultNodeHome), AddGenesisTransferAgentCmd(app.DefaultNodeHome))
	rootCmd.AddCommand(
		server.StatusCommand(),
		genesisCmd,
		queryCommand(),
		txCommand(),
		keys.Commands(),
	)
}

// replaceCommand puts cmd in place of root's command of the same name.
func replaceCommand(root, cmd *cobra.Command) {
	for _, c := range root.Commands() {
		if c.Name() == cmd.Name() {
			root.RemoveCommand(c)
		}
	}
	root.AddCommand(cmd)
}

func queryCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:                        "query",
		Aliases:                    []string{"q"},
		Short:                      "Querying subcommands",
		DisableFlagParsing:         false,
		SuggestionsMinimumDistance: 2,
		RunE:                       client.ValidateCmd,
	}
	cmd.AddCommand(
		rpc.WaitTxCmd(),
		server.QueryBlockCmd(),
		authcmd.QueryTxsByEventsCmd(),
		server.QueryBlocksCmd(),
		authcmd.QueryTxCmd(),
		server.QueryBlockResultsCmd(),
		healthBundleCmd(),
	)
	return cmd
}

func txCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:                        "tx",
		Short:                      "Transactions subcommands",
		DisableFlagParsing:         false,
		SuggestionsMinimumDistance: 2,
		RunE:                       client.ValidateCmd,
	}
	cmd.AddCommand(
		authcmd.GetSignCommand(),
		authcmd.GetSignBatchCommand(),
		authcmd.GetMultiSignCommand(),
		authcmd.GetMultiSignBatchCmd(),
		authcmd.GetValidateSignaturesCommand(),
		authcmd.GetBroadcastCommand(),
		authcmd.GetEncodeCommand(),
		authcmd.GetDecodeCommand(),
		authcmd.GetSimulateCmd(),
	)
	return cmd
}

func newApp(logger log.Logger, db dbm.DB, appOpts servertypes.AppOptions) servertypes.Application {
	a, err := app.New(logger, db, true, appOpts, server.DefaultBaseappOptions(appOpts)...)
	if err != nil {
		// The server's AppCreator has no error return; a node that cannot
		// build its app must not start.
		panic(err)
	}
	return a
}

func exportApp(
	logger log.Logger, db dbm.DB, height int64, forZeroHeight bool,
	jailAllowedAddrs []string, appOpts servertypes.AppOptions, modulesToExport []string,
) (servertypes.ExportedApp, error) {
	a, err := app.New(logger, db, height == -1, appOpts)
	if err != nil {
		return servertypes.ExportedApp{}, err
	}
	if height != -1 {
		if err := a.LoadHeight(height); err != nil {
			return servertypes.ExportedApp{}, err
		}
	}
	return a.ExportAppStateAndValidators(forZeroHeight, jailAllowedAddrs, modulesToExport)
}
