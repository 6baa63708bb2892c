package cmd

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"

	"cosmossdk.io/log/v2"
	cmtproto "github.com/cometbft/cometbft/proto/tendermint/types"
	dbm "github.com/cosmos/cosmos-db"
	"github.com/spf13/cobra"

	"github.com/cosmos/cosmos-sdk/client/flags"
	"github.com/cosmos/cosmos-sdk/server"
	servertypes "github.com/cosmos/cosmos-sdk/server/types"
	genutiltypes "github.com/cosmos/cosmos-sdk/x/genutil/types"

	"github.com/inferenced/inferenced/app"
)

// exportCmd is the SDK's export command with the ABCI consensus params put
// back into the genesis document it writes. The SDK builds that document's
// consensus params field by field and leaves out vote_extensions_enable_height
// (cosmos/cosmos-sdk#26741, fixed upstream after v0.53.8), so a chain
// restarted from its export would never attest executor health again. The
// value written is the app's (app.RestartedVoteExtensionsHeight).
func exportCmd() *cobra.Command {
	var (
		ran      bool
		exported cmtproto.ABCIParams
	)
	exporter := func(logger log.Logger, db dbm.DB, height int64, forZeroHeight bool,
		jailAllowedAddrs []string, appOpts servertypes.AppOptions, modulesToExport []string,
	) (servertypes.ExportedApp, error) {
		out, err := exportApp(logger, db, height, forZeroHeight, jailAllowedAddrs, appOpts, modulesToExport)
		if err == nil && out.ConsensusParams.Abci != nil {
			exported = *out.ConsensusParams.Abci
		}
		ran = err == nil
		return out, err
	}
	cmd := server.ExportCmd(exporter, app.DefaultNodeHome)
	sdkRun := cmd.RunE
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		stdout := cmd.OutOrStdout()
		var buf bytes.Buffer
		cmd.SetOut(&buf)
		err := sdkRun(cmd, args)
		cmd.SetOut(stdout)
		if err != nil {
			return err
		}
		if !ran {
			// No app exporter ran (the SDK copied the genesis file as it is).
			_, err := io.Copy(stdout, &buf)
			return err
		}
		document, _ := cmd.Flags().GetString(flags.FlagOutputDocument)
		if document == "" {
			return writeWithABCIParams(&buf, stdout, exported)
		}
		return rewriteWithABCIParams(document, exported)
	}
	return cmd
}

// withABCIParams puts abci into the genesis document's consensus params.
func withABCIParams(doc *genutiltypes.AppGenesis, abci cmtproto.ABCIParams) error {
	if doc.Consensus == nil || doc.Consensus.Params == nil {
		return fmt.Errorf("exported genesis has no consensus params")
	}
	doc.Consensus.Params.ABCI.VoteExtensionsEnableHeight = abci.VoteExtensionsEnableHeight
	return nil
}

func writeWithABCIParams(in io.Reader, out io.Writer, abci cmtproto.ABCIParams) error {
	doc, err := genutiltypes.AppGenesisFromReader(in)
	if err != nil {
		return fmt.Errorf("read exported genesis: %w", err)
	}
	if err := withABCIParams(doc, abci); err != nil {
		return err
	}
	bz, err := json.Marshal(doc)
	if err != nil {
		return fmt.Errorf("encode exported genesis: %w", err)
	}
	_, err = out.Write(bz)
	return err
}

func rewriteWithABCIParams(file string, abci cmtproto.ABCIParams) error {
	doc, err := genutiltypes.AppGenesisFromFile(file)
	if err != nil {
		return fmt.Errorf("read exported genesis %s: %w", file, err)
	}
	if err := withABCIParams(doc, abci); err != nil {
		return err
	}
	if err := doc.SaveAs(file); err != nil {
		return fmt.Errorf("write exported genesis %s: %w", file, err)
	}
	return nil
}
