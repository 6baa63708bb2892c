package types_test

import (
	"strings"
	"testing"

	"cosmossdk.io/math"
	"github.com/stretchr/testify/require"

	sdk "github.com/cosmos/cosmos-sdk/types"

	"github.com/inferenced/inferenced/x/inference/types"
)

func bond() sdk.Coin { return types.DefaultParams().TransferAgentMinBond }

// One rule per case; the valid genesis is in epoch validGenesis().Epoch.
func TestGenesisValidatesTransferAgents(t *testing.T) {
	epoch := validGenesis().Epoch.Index
	agent := func(i byte) types.TransferAgent {
		return types.TransferAgent{Address: bech(i), Bond: bond(), RegisteredEpoch: epoch, Standing: types.AgentStanding{EpochIndex: epoch}}
	}
	for _, tc := range []struct {
		name   string
		agents func() []types.TransferAgent
		want   string // "" = valid
	}{
		{"agents serving and leaving", func() []types.TransferAgent {
			leaving := agent(0xA2)
			leaving.LeavingEpoch = epoch
			return []types.TransferAgent{agent(0xA1), leaving}
		}, ""},
		{"a bond above the minimum or in an old denom", func() []types.TransferAgent {
			a, b := agent(0xA1), agent(0xA2)
			a.Bond = sdk.NewInt64Coin("stake", 9_000_000)
			b.Bond = sdk.NewInt64Coin("uold", 1) // governance changed the bond since
			return []types.TransferAgent{a, b}
		}, ""},
		{"a non-canonical address", func() []types.TransferAgent {
			a := agent(0xA1)
			a.Address = strings.ToUpper(a.Address)
			return []types.TransferAgent{a}
		}, "canonical"},
		{"a malformed address", func() []types.TransferAgent {
			a := agent(0xA1)
			a.Address = "infer1bad"
			return []types.TransferAgent{a}
		}, "address"},
		{"a duplicate", func() []types.TransferAgent { return []types.TransferAgent{agent(0xA1), agent(0xA1)} }, "listed twice"},
		{"a zero bond", func() []types.TransferAgent {
			a := agent(0xA1)
			a.Bond = sdk.NewInt64Coin("stake", 0)
			return []types.TransferAgent{a}
		}, "bond must be positive"},
		{"a negative bond", func() []types.TransferAgent {
			a := agent(0xA1)
			a.Bond = sdk.Coin{Denom: "stake", Amount: math.NewInt(-1)}
			return []types.TransferAgent{a}
		}, "bond"},
		{"an invalid bond denom", func() []types.TransferAgent {
			a := agent(0xA1)
			a.Bond = sdk.Coin{Denom: "1x", Amount: math.NewInt(5)}
			return []types.TransferAgent{a}
		}, "bond"},
		{"registered after the current epoch", func() []types.TransferAgent {
			a := agent(0xA1)
			a.RegisteredEpoch = epoch + 1
			return []types.TransferAgent{a}
		}, "registered_epoch"},
		{"left in an earlier epoch and never released", func() []types.TransferAgent {
			a := agent(0xA1)
			a.RegisteredEpoch = 1
			a.LeavingEpoch = epoch - 1
			return []types.TransferAgent{a}
		}, "leaving_epoch"},
		{"leaving in a future epoch", func() []types.TransferAgent {
			a := agent(0xA1)
			a.LeavingEpoch = epoch + 1
			return []types.TransferAgent{a}
		}, "leaving_epoch"},
		{"a standing of a future epoch", func() []types.TransferAgent {
			a := agent(0xA1)
			a.Standing.EpochIndex = epoch + 1
			return []types.TransferAgent{a}
		}, "standing epoch_index"},
		{"a negative stopped height", func() []types.TransferAgent {
			a := agent(0xA1)
			a.Standing.StoppedHeight = -1
			return []types.TransferAgent{a}
		}, "stopped_height"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			gs := validGenesis()
			gs.TransferAgents = tc.agents()
			err := gs.Validate(ac)
			if tc.want == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorContains(t, err, tc.want)
		})
	}
}

// Attack: a genesis that overfills the registry (bypassing the message's
// check) is refused.
func TestGenesisRefusesMoreAgentsThanMaxTransferAgents(t *testing.T) {
	gs := validGenesis()
	gs.Params.MaxTransferAgents = 1
	gs.TransferAgents = []types.TransferAgent{
		{Address: bech(0xA1), Bond: bond(), RegisteredEpoch: 1},
		{Address: bech(0xA2), Bond: bond(), RegisteredEpoch: 1},
	}
	require.ErrorContains(t, gs.Validate(ac), "exceed max_transfer_agents 1")
}

// Before the first block there is no epoch: agents of epoch 0 only, none leaving.
func TestGenesisWithoutEpochTakesOnlyServingAgentsOfEpochZero(t *testing.T) {
	gs := types.DefaultGenesis()
	gs.TransferAgents = []types.TransferAgent{{Address: bech(0xA1), Bond: bond()}}
	require.NoError(t, gs.Validate(ac))
	gs.TransferAgents[0].LeavingEpoch = 1
	require.ErrorContains(t, gs.Validate(ac), "leaving_epoch")
	gs.TransferAgents[0].LeavingEpoch = 0
	gs.TransferAgents[0].RegisteredEpoch = 1
	require.ErrorContains(t, gs.Validate(ac), "registered_epoch")
}
