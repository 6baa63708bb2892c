package cmd

import (
	"path/filepath"
	"strings"
	"testing"

	sdk "github.com/cosmos/cosmos-sdk/types"

	"github.com/inferenced/inferenced/x/inference/types"
)

func TestAddGenesisParticipantBondsItsWeight(t *testing.T) {
	home := t.TempDir()
	kr := []string{"--keyring-backend", "test", "--home", home}
	if out, err := run(t, "init", "node0", "--chain-id", "test-1", "--home", home); err != nil {
		t.Fatalf("init: %v\n%s", err, out)
	}
	for _, k := range []string{"exec0", "exec1", "exec2", "exec3"} {
		if out, err := run(t, append([]string{"keys", "add", k}, kr...)...); err != nil {
			t.Fatalf("keys add %s: %v\n%s", k, err, out)
		}
	}
	p := types.DefaultParams()
	cases := []struct {
		name, key string
		flags     []string
		wantBond  sdk.Coin
		wantErr   string // "" for success
	}{
		{"default bond is weight x per-weight", "exec0", []string{"--weight", "150"}, types.BondForWeight(150, p), ""},
		{"default bond is at least the minimum", "exec1", []string{"--weight", "5"}, p.ParticipantMinBond, ""},
		{"explicit bond above the weight", "exec2", []string{"--weight", "100", "--bond", "3000000stake"}, sdk.NewInt64Coin("stake", 3_000_000), ""},
		{"lottery capture by self-declared weight", "exec3", []string{"--weight", "1000", "--bond", "1000000stake"}, sdk.Coin{}, "needs a bond of 10000000stake"},
		{"attack: bond below the minimum", "exec3", []string{"--weight", "1", "--bond", "999999stake"}, sdk.Coin{}, "participant_min_bond"},
		{"attack: bond in a worthless denom", "exec3", []string{"--weight", "1", "--bond", "5000000junk"}, sdk.Coin{}, "participant_min_bond"},
		{"not a coin", "exec3", []string{"--bond", "lots"}, sdk.Coin{}, `bond "lots"`},
		{"registry fill: register twice", "exec0", nil, sdk.Coin{}, "already in genesis"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before, bankBefore := genesisState(t, home)
			args := append([]string{"genesis", "add-genesis-participant", tc.key, "http://127.0.0.1:9000", "llama"}, tc.flags...)
			out, err := run(t, append(args, kr...)...)
			after, bankAfter := genesisState(t, home)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("want an error containing %q, got %v\n%s", tc.wantErr, err, out)
				}
				if len(after.Participants) != len(before.Participants) || !moduleBalance(bankAfter).Equal(moduleBalance(bankBefore)) {
					t.Fatalf("a refused participant changed the genesis")
				}
				return
			}
			if err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			added := after.Participants[len(after.Participants)-1]
			if !added.Bond.Equal(tc.wantBond) {
				t.Fatalf("bond %s, want %s", added.Bond, tc.wantBond)
			}
			if got, want := moduleBalance(bankAfter), moduleBalance(bankBefore).Add(tc.wantBond); !got.Equal(want) {
				t.Fatalf("module balance %s, want %s", got, want)
			}
		})
	}
	if out, err := run(t, "genesis", "validate", filepath.Join(home, "config", "genesis.json"), "--home", home); err != nil {
		t.Fatalf("genesis validate: %v\n%s", err, out)
	}
}
