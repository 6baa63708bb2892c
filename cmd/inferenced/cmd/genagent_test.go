package cmd

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"cosmossdk.io/core/address"

	"github.com/cosmos/cosmos-sdk/codec"
	addresscodec "github.com/cosmos/cosmos-sdk/codec/address"
	svrcmd "github.com/cosmos/cosmos-sdk/server/cmd"
	sdk "github.com/cosmos/cosmos-sdk/types"
	authtypes "github.com/cosmos/cosmos-sdk/x/auth/types"
	banktypes "github.com/cosmos/cosmos-sdk/x/bank/types"
	genutiltypes "github.com/cosmos/cosmos-sdk/x/genutil/types"

	"github.com/inferenced/inferenced/app"
	"github.com/inferenced/inferenced/x/inference/types"
)

// run executes one inferenced command line in-process, as main does.
func run(t *testing.T, args ...string) (string, error) {
	t.Helper()
	root, err := NewRootCmd()
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&out)
	root.SetArgs(args)
	err = svrcmd.Execute(root, "", app.DefaultNodeHome)
	return out.String(), err
}

// genesisState reads the x/inference and bank genesis of home.
func genesisState(t *testing.T, home string) (types.GenesisState, banktypes.GenesisState) {
	t.Helper()
	appGenesis, err := genutiltypes.AppGenesisFromFile(filepath.Join(home, "config", "genesis.json"))
	if err != nil {
		t.Fatal(err)
	}
	var appState map[string]json.RawMessage
	if err := json.Unmarshal(appGenesis.AppState, &appState); err != nil {
		t.Fatal(err)
	}
	cdc := testCodec(t)
	var inf types.GenesisState
	var bank banktypes.GenesisState
	if err := cdc.UnmarshalJSON(appState[types.ModuleName], &inf); err != nil {
		t.Fatal(err)
	}
	if err := cdc.UnmarshalJSON(appState[banktypes.ModuleName], &bank); err != nil {
		t.Fatal(err)
	}
	return inf, bank
}

func moduleBalance(bank banktypes.GenesisState) sdk.Coins {
	module := authtypes.NewModuleAddress(types.ModuleName).String()
	for _, b := range bank.Balances {
		if b.Address == module {
			return b.Coins
		}
	}
	return nil
}

func TestAddGenesisTransferAgent(t *testing.T) {
	home := t.TempDir()
	kr := []string{"--keyring-backend", "test", "--home", home}
	if out, err := run(t, "init", "node0", "--chain-id", "test-1", "--home", home); err != nil {
		t.Fatalf("init: %v\n%s", err, out)
	}
	for _, k := range []string{"agent0", "agent1"} {
		if out, err := run(t, append([]string{"keys", "add", k}, kr...)...); err != nil {
			t.Fatalf("keys add %s: %v\n%s", k, err, out)
		}
	}
	minBond := types.DefaultParams().TransferAgentMinBond
	cases := []struct {
		name, agent, bond string
		wantErr           string // "" for success
	}{
		{"ok by key name", "agent0", minBond.String(), ""},
		{"ok above the minimum", "agent1", "2000000" + minBond.Denom, ""},
		{"attack: register twice to double-count a bond", "agent0", minBond.String(), "already in genesis"},
		{"not a coin", "agent1", "lots", "bond \"lots\""},
		{"zero bond", "agent1", "0" + minBond.Denom, "must be positive"},
		{"attack: bond below the minimum", "agent1", "999999" + minBond.Denom, "below the minimum bond"},
		{"attack: bond in a worthless denom", "agent1", "5000000junk", "must be in the bond denom"},
		{"wrong key", "nosuchkey", minBond.String(), "neither an address nor a key"},
		{"bad address", "cosmos1notanaddress", minBond.String(), "neither an address nor a key"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before, bankBefore := genesisState(t, home)
			out, err := run(t, append([]string{"genesis", "add-genesis-transfer-agent", tc.agent, tc.bond}, kr...)...)
			after, bankAfter := genesisState(t, home)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("want an error containing %q, got %v\n%s", tc.wantErr, err, out)
				}
				if len(after.TransferAgents) != len(before.TransferAgents) || !moduleBalance(bankAfter).Equal(moduleBalance(bankBefore)) {
					t.Fatalf("a refused agent changed the genesis: %v -> %v", before.TransferAgents, after.TransferAgents)
				}
				return
			}
			if err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			bond, _ := sdk.ParseCoinNormalized(tc.bond)
			if got, want := moduleBalance(bankAfter), moduleBalance(bankBefore).Add(bond); !got.Equal(want) {
				t.Fatalf("module balance %s, want %s", got, want)
			}
			if len(after.TransferAgents) != len(before.TransferAgents)+1 {
				t.Fatalf("agents %v, want one more than %v", after.TransferAgents, before.TransferAgents)
			}
			if !bankAfter.Supply.Empty() {
				t.Fatalf("an empty genesis supply must stay empty (the bank computes it), got %s", bankAfter.Supply)
			}
		})
	}
	inf, _ := genesisState(t, home)
	ac := testAddressCodec()
	for i := 1; i < len(inf.TransferAgents); i++ {
		a, _ := ac.StringToBytes(inf.TransferAgents[i-1].Address)
		b, _ := ac.StringToBytes(inf.TransferAgents[i].Address)
		if bytes.Compare(a, b) >= 0 {
			t.Fatalf("agents not in address order: %v", inf.TransferAgents)
		}
	}
	for _, a := range inf.TransferAgents {
		if a.RegisteredEpoch != 0 || a.LeavingEpoch != 0 {
			t.Fatalf("a genesis agent is registered in epoch 0 and not leaving: %+v", a)
		}
	}
	if out, err := run(t, "genesis", "validate", filepath.Join(home, "config", "genesis.json"), "--home", home); err != nil {
		t.Fatalf("genesis validate: %v\n%s", err, out)
	}
}

// A genesis that writes its supply out must keep it equal to the balances.
func TestAddTransferAgentKeepsWrittenSupply(t *testing.T) {
	cdc := testCodec(t)
	ac := testAddressCodec()
	holder := sdk.AccAddress(bytes.Repeat([]byte{1}, 20)).String()
	agent := sdk.AccAddress(bytes.Repeat([]byte{2}, 20)).String()
	bank := banktypes.DefaultGenesisState()
	bank.Balances = []banktypes.Balance{{Address: holder, Coins: sdk.NewCoins(sdk.NewInt64Coin("stake", 10))}}
	bank.Supply = sdk.NewCoins(sdk.NewInt64Coin("stake", 10))
	appState := map[string]json.RawMessage{
		types.ModuleName:     cdc.MustMarshalJSON(types.DefaultGenesis()),
		banktypes.ModuleName: cdc.MustMarshalJSON(bank),
	}
	bond := types.DefaultParams().TransferAgentMinBond
	if err := addTransferAgent(cdc, ac, appState, types.TransferAgent{Address: agent, Bond: bond}); err != nil {
		t.Fatal(err)
	}
	var got banktypes.GenesisState
	cdc.MustUnmarshalJSON(appState[banktypes.ModuleName], &got)
	if want := bank.Supply.Add(bond); !got.Supply.Equal(want) {
		t.Fatalf("supply %s, want %s", got.Supply, want)
	}
	if err := got.Validate(); err != nil {
		t.Fatal(err)
	}
}

func testCodec(t *testing.T) codec.Codec {
	t.Helper()
	registry, err := app.NewInterfaceRegistry()
	if err != nil {
		t.Fatal(err)
	}
	return codec.NewProtoCodec(registry)
}

func testAddressCodec() address.Codec {
	return addresscodec.NewBech32Codec(sdk.GetConfig().GetBech32AccountAddrPrefix())
}
