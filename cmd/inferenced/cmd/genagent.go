package cmd

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"

	"cosmossdk.io/core/address"
	"github.com/spf13/cobra"

	"github.com/cosmos/cosmos-sdk/client"
	"github.com/cosmos/cosmos-sdk/client/flags"
	"github.com/cosmos/cosmos-sdk/codec"
	"github.com/cosmos/cosmos-sdk/server"
	sdk "github.com/cosmos/cosmos-sdk/types"
	authtypes "github.com/cosmos/cosmos-sdk/x/auth/types"
	banktypes "github.com/cosmos/cosmos-sdk/x/bank/types"

	"github.com/inferenced/inferenced/x/inference/types"
)

// AddGenesisTransferAgentCmd registers a transfer agent in genesis.json, so
// that a fresh network has agents that may start inferences from block one.
// The bond is minted into the inference module account, which holds every
// agent's bond, as if the agent had registered on chain.
func AddGenesisTransferAgentCmd(defaultNodeHome string) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "add-genesis-transfer-agent [address_or_key_name] [bond]",
		Short: "Add a bonded transfer agent to genesis.json (the bond is held by the inference module account)",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			clientCtx := client.GetClientContextFromCmd(cmd)
			config := server.GetServerContextFromCmd(cmd).Config
			config.SetRoot(clientCtx.HomeDir)

			addr, err := resolveAddress(cmd, clientCtx, args[0])
			if err != nil {
				return err
			}
			bond, err := sdk.ParseCoinNormalized(args[1])
			if err != nil {
				return fmt.Errorf("bond %q: %w", args[1], err)
			}
			agent := types.TransferAgent{Address: addr, Bond: bond, RegisteredEpoch: 0}
			return addTransferAgentToGenesis(clientCtx, config.GenesisFile(), agent)
		},
	}
	cmd.Flags().String(flags.FlagHome, defaultNodeHome, "The application home directory")
	cmd.Flags().String(flags.FlagKeyringBackend, flags.DefaultKeyringBackend, "Select keyring's backend (os|file|kwallet|pass|test)")
	return cmd
}

func addTransferAgentToGenesis(clientCtx client.Context, genFile string, agent types.TransferAgent) error {
	ac := clientCtx.InterfaceRegistry.SigningContext().AddressCodec()
	return editAppState(genFile, func(appState map[string]json.RawMessage) error {
		return addTransferAgent(clientCtx.Codec, ac, appState, agent)
	})
}

// addTransferAgent appends agent to the x/inference genesis in appState
// (kept in address-byte order) and adds its bond to the inference module
// account's bank balance, so that the bank holds what the agents bonded.
func addTransferAgent(cdc codec.JSONCodec, ac address.Codec, appState map[string]json.RawMessage, agent types.TransferAgent) error {
	var gs types.GenesisState
	if err := cdc.UnmarshalJSON(appState[types.ModuleName], &gs); err != nil {
		return fmt.Errorf("decode %s genesis: %w", types.ModuleName, err)
	}
	agentBz, err := types.CanonicalAddress(ac, agent.Address)
	if err != nil {
		return fmt.Errorf("agent address %q: %w", agent.Address, err)
	}
	if agent.Address, err = ac.BytesToString(agentBz); err != nil {
		return err
	}
	if err := checkBond(agent.Bond, gs.Params.TransferAgentMinBond); err != nil {
		return err
	}
	at, err := agentIndex(ac, gs.TransferAgents, agentBz)
	if err != nil {
		return err
	}
	gs.TransferAgents = slices.Insert(gs.TransferAgents, at, agent)
	return storeBondedGenesis(cdc, ac, appState, gs, agent.Bond)
}

// storeBondedGenesis writes gs, which a genesis command just extended with
// one bonded agent or participant, back to the app state once it is
// valid, adding bond to the module account's balance.
func storeBondedGenesis(cdc codec.JSONCodec, ac address.Codec, appState map[string]json.RawMessage, gs types.GenesisState, bond sdk.Coin) error {
	if err := gs.Validate(ac); err != nil {
		return fmt.Errorf("genesis would be invalid: %w", err)
	}
	if err := addModuleBond(cdc, ac, appState, bond); err != nil {
		return err
	}
	bz, err := cdc.MarshalJSON(&gs)
	if err != nil {
		return err
	}
	appState[types.ModuleName] = bz
	return nil
}

// checkBond refuses a bond the chain would not accept on registration: not
// a valid positive coin, or not at least the genesis params' minimum bond in
// its denom.
func checkBond(bond, min sdk.Coin) error {
	if err := bond.Validate(); err != nil {
		return fmt.Errorf("bond %s: %w", bond, err)
	}
	if !bond.IsPositive() {
		return fmt.Errorf("bond %s must be positive", bond)
	}
	if bond.Denom != min.Denom {
		return fmt.Errorf("bond %s: must be in the bond denom %q (transfer_agent_min_bond)", bond, min.Denom)
	}
	if bond.IsLT(min) {
		return fmt.Errorf("bond %s is below the minimum bond %s (transfer_agent_min_bond)", bond, min)
	}
	return nil
}

// agentIndex is where an agent with address bytes bz goes in agents, or an
// error if it is already there.
func agentIndex(ac address.Codec, agents []types.TransferAgent, bz []byte) (int, error) {
	for i, a := range agents {
		existing, err := ac.StringToBytes(a.Address)
		if err != nil {
			return 0, fmt.Errorf("transfer agent %d in genesis (%q): %w", i, a.Address, err)
		}
		switch c := bytes.Compare(existing, bz); {
		case c == 0:
			return 0, fmt.Errorf("transfer agent %s is already in genesis", a.Address)
		case c > 0:
			return i, nil
		}
	}
	return len(agents), nil
}

// addModuleBond adds bond to the inference module account's genesis
// balance, and to the genesis supply when one is written out (an empty
// supply is computed by the bank from the balances).
func addModuleBond(cdc codec.JSONCodec, ac address.Codec, appState map[string]json.RawMessage, bond sdk.Coin) error {
	var bank banktypes.GenesisState
	if err := cdc.UnmarshalJSON(appState[banktypes.ModuleName], &bank); err != nil {
		return fmt.Errorf("decode %s genesis: %w", banktypes.ModuleName, err)
	}
	module, err := ac.BytesToString(authtypes.NewModuleAddress(types.ModuleName))
	if err != nil {
		return err
	}
	found := false
	for i, b := range bank.Balances {
		if b.Address == module {
			bank.Balances[i].Coins = b.Coins.Add(bond)
			found = true
		}
	}
	if !found {
		bank.Balances = append(bank.Balances, banktypes.Balance{Address: module, Coins: sdk.NewCoins(bond)})
	}
	// Sorted by address, as the bank requires of genesis balances.
	bank.Balances = banktypes.SanitizeGenesisBalances(bank.Balances)
	if !bank.Supply.Empty() {
		bank.Supply = bank.Supply.Add(bond)
	}
	if err := bank.Validate(); err != nil {
		return fmt.Errorf("bank genesis would be invalid: %w", err)
	}
	bz, err := cdc.MarshalJSON(&bank)
	if err != nil {
		return err
	}
	appState[banktypes.ModuleName] = bz
	return nil
}
