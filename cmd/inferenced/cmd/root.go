// Package cmd builds the inferenced command tree: node commands from the SDK
// server, genesis helpers, keys, and autocli commands for every module.
package cmd

import (
	"fmt"
	"os"

	"cosmossdk.io/log/v2"
	dbm "github.com/cosmos/cosmos-db"
	"github.com/spf13/cobra"

	"github.com/cosmos/cosmos-sdk/client"
	"github.com/cosmos/cosmos-sdk/client/config"
	"github.com/cosmos/cosmos-sdk/server"
	simtestutil "github.com/cosmos/cosmos-sdk/testutil/sims"
	"github.com/cosmos/cosmos-sdk/x/auth/types"

	"github.com/inferenced/inferenced/app"
)

// NewRootCmd builds the root command. A throwaway in-memory app supplies the
// codecs and the module list that the CLI is generated from.
func NewRootCmd() (*cobra.Command, error) {
	tempDir, err := os.MkdirTemp("", "inferenced-cli")
	if err != nil {
		return nil, fmt.Errorf("temp dir: %w", err)
	}
	defer func() {
		// A temp dir left behind is harmless: say so rather than fail the command.
		if err := os.RemoveAll(tempDir); err != nil {
			fmt.Fprintln(os.Stderr, "inferenced: remove", tempDir+":", err)
		}
	}()
	tempApp, err := app.New(log.NewNopLogger(), dbm.NewMemDB(), false, simtestutil.NewAppOptionsWithFlagHome(tempDir))
	if err != nil {
		return nil, fmt.Errorf("build app for the CLI: %w", err)
	}

	initClientCtx := client.Context{}.
		WithCodec(tempApp.AppCodec()).
		WithInterfaceRegistry(tempApp.InterfaceRegistry()).
		WithTxConfig(tempApp.TxConfig()).
		WithLegacyAmino(tempApp.LegacyAmino()).
		WithInput(os.Stdin).
		WithAccountRetriever(types.AccountRetriever{}).
		WithHomeDir(app.DefaultNodeHome).
		WithViper("")

	rootCmd := &cobra.Command{
		Use:           app.Name,
		Short:         "inferenced: a Cosmos SDK chain for a decentralized AI-inference network",
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			cmd.SetOut(cmd.OutOrStdout())
			cmd.SetErr(cmd.ErrOrStderr())
			clientCtx := initClientCtx.WithCmdContext(cmd.Context())
			clientCtx, err := client.ReadPersistentCommandFlags(clientCtx, cmd.Flags())
			if err != nil {
				return err
			}
			clientCtx, err = config.ReadFromClientConfig(clientCtx)
			if err != nil {
				return err
			}
			if err := client.SetCmdClientContextHandler(clientCtx, cmd); err != nil {
				return err
			}
			appTemplate, appConfig := initAppConfig()
			return server.InterceptConfigsPreRunHandler(cmd, appTemplate, appConfig, initCometConfig())
		},
	}
	initRootCmd(rootCmd, tempApp)

	autoCliOpts := tempApp.AutoCliOpts()
	autoCliOpts.ClientCtx = initClientCtx
	if err := autoCliOpts.EnhanceRootCommand(rootCmd); err != nil {
		return nil, fmt.Errorf("autocli: %w", err)
	}
	return rootCmd, nil
}
