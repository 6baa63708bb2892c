package cmd

import (
	"bufio"
	"encoding/json"
	"fmt"

	"cosmossdk.io/core/address"
	"github.com/spf13/cobra"

	"github.com/cosmos/cosmos-sdk/client"
	"github.com/cosmos/cosmos-sdk/client/flags"
	"github.com/cosmos/cosmos-sdk/codec"
	"github.com/cosmos/cosmos-sdk/crypto/keyring"
	"github.com/cosmos/cosmos-sdk/server"
	sdk "github.com/cosmos/cosmos-sdk/types"
	"github.com/cosmos/cosmos-sdk/x/genutil"
	genutiltypes "github.com/cosmos/cosmos-sdk/x/genutil/types"

	"github.com/inferenced/inferenced/x/inference/types"
)

const (
	flagWeight       = "weight"
	flagPocAvailable = "poc-available"
	flagBond         = "bond"
)

// AddGenesisParticipantCmd registers an executor in genesis.json, so that it
// is in the first epoch group instead of waiting for the first boundary.
// Its bond is minted into the inference module account, as if it had
// registered on chain; without --bond it is the smallest bond the chain
// would take for the weight (weight x participant_bond_per_weight, at
// least participant_min_bond).
func AddGenesisParticipantCmd(defaultNodeHome string) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "add-genesis-participant [address_or_key_name] [inference-url] [model]...",
		Short: "Add an executor participant to genesis.json",
		Args:  cobra.MinimumNArgs(3),
		RunE: func(cmd *cobra.Command, args []string) error {
			clientCtx := client.GetClientContextFromCmd(cmd)
			config := server.GetServerContextFromCmd(cmd).Config
			config.SetRoot(clientCtx.HomeDir)

			addr, err := resolveAddress(cmd, clientCtx, args[0])
			if err != nil {
				return err
			}
			weight, _ := cmd.Flags().GetUint64(flagWeight)
			poc, _ := cmd.Flags().GetBool(flagPocAvailable)
			models, err := types.NormalizeModels(args[2:])
			if err != nil {
				return err
			}
			bondArg, _ := cmd.Flags().GetString(flagBond)
			p := types.Participant{
				Address:      addr,
				InferenceUrl: args[1],
				Models:       models,
				Weight:       weight,
				PocAvailable: poc,
				Status:       types.PARTICIPANT_STATUS_ACTIVE,
			}
			return addParticipantToGenesis(clientCtx, config.GenesisFile(), p, bondArg)
		},
	}
	cmd.Flags().String(flags.FlagHome, defaultNodeHome, "The application home directory")
	cmd.Flags().String(flags.FlagKeyringBackend, flags.DefaultKeyringBackend, "Select keyring's backend (os|file|kwallet|pass|test)")
	cmd.Flags().Uint64(flagWeight, 100, "lottery weight, backed by the bond (which stands in for proof-of-compute weight)")
	cmd.Flags().String(flagBond, "", "bond held by the module account, e.g. 1000000stake "+
		"(default: weight x participant_bond_per_weight, at least participant_min_bond)")
	cmd.Flags().Bool(flagPocAvailable, false, "also serve during the PoC phase")
	return cmd
}

func resolveAddress(cmd *cobra.Command, clientCtx client.Context, arg string) (string, error) {
	if _, err := sdk.AccAddressFromBech32(arg); err == nil {
		return arg, nil
	}
	backend, _ := cmd.Flags().GetString(flags.FlagKeyringBackend)
	kr, err := keyring.New(sdk.KeyringServiceName(), backend, clientCtx.HomeDir, bufio.NewReader(cmd.InOrStdin()), clientCtx.Codec)
	if err != nil {
		return "", fmt.Errorf("open keyring: %w", err)
	}
	record, err := kr.Key(arg)
	if err != nil {
		return "", fmt.Errorf("%q is neither an address nor a key: %w", arg, err)
	}
	addr, err := record.GetAddress()
	if err != nil {
		return "", err
	}
	return addr.String(), nil
}

func addParticipantToGenesis(clientCtx client.Context, genFile string, p types.Participant, bondArg string) error {
	ac := clientCtx.InterfaceRegistry.SigningContext().AddressCodec()
	return editAppState(genFile, func(appState map[string]json.RawMessage) error {
		return addParticipant(clientCtx.Codec, ac, appState, p, bondArg)
	})
}

// addParticipant appends p to the x/inference genesis in appState with its
// bond (bondArg, or the default for its weight) and adds the bond to the
// inference module account's bank balance.
func addParticipant(cdc codec.JSONCodec, ac address.Codec, appState map[string]json.RawMessage, p types.Participant, bondArg string) error {
	var gs types.GenesisState
	if err := cdc.UnmarshalJSON(appState[types.ModuleName], &gs); err != nil {
		return fmt.Errorf("decode %s genesis: %w", types.ModuleName, err)
	}
	for _, existing := range gs.Participants {
		if existing.Address == p.Address {
			return fmt.Errorf("participant %s is already in genesis", p.Address)
		}
	}
	bond, err := participantBond(bondArg, p.Weight, gs.Params)
	if err != nil {
		return err
	}
	p.Bond = bond
	gs.Participants = append(gs.Participants, p)
	return storeBondedGenesis(cdc, ac, appState, gs, bond)
}

// participantBond is bondArg parsed, or the smallest bond the chain would
// take for weight, checked as registration checks it: at least
// participant_min_bond in its denom, backing weight.
func participantBond(bondArg string, weight uint64, params types.Params) (sdk.Coin, error) {
	bond := types.BondForWeight(weight, params)
	if bond.IsLT(params.ParticipantMinBond) {
		bond = params.ParticipantMinBond
	}
	if bondArg != "" {
		var err error
		if bond, err = sdk.ParseCoinNormalized(bondArg); err != nil {
			return sdk.Coin{}, fmt.Errorf("bond %q: %w", bondArg, err)
		}
	}
	if err := types.CheckParticipantMinBond(bond, params); err != nil {
		return sdk.Coin{}, err
	}
	if err := types.CheckBackedWeight(weight, bond, params); err != nil {
		return sdk.Coin{}, err
	}
	return bond, nil
}

// editAppState reads genFile, lets edit change its app state by module, and
// writes it back (the genesis commands' one way to touch the file).
func editAppState(genFile string, edit func(appState map[string]json.RawMessage) error) error {
	appGenesis, err := genutiltypes.AppGenesisFromFile(genFile)
	if err != nil {
		return fmt.Errorf("read genesis: %w", err)
	}
	var appState map[string]json.RawMessage
	if err := json.Unmarshal(appGenesis.AppState, &appState); err != nil {
		return fmt.Errorf("decode app state: %w", err)
	}
	if err := edit(appState); err != nil {
		return err
	}
	if appGenesis.AppState, err = json.Marshal(appState); err != nil {
		return err
	}
	return genutil.ExportGenesisFile(appGenesis, genFile)
}
