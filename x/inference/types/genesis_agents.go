package types

import (
	"fmt"

	"cosmossdk.io/core/address"
)

// validateAgents checks the transfer-agent registry of a genesis: canonical
// and unique addresses, a positive bond, at most max_transfer_agents, and
// epochs consistent with the genesis epoch. An agent that asked to leave did
// so in the current epoch: otherwise the boundary that returns its bond has
// passed without returning it. The bond denom and amount need not match the
// current transfer_agent_min_bond: governance may have changed it since the
// agent registered. That the module account holds the bonds is checked at
// InitGenesis, which can read x/bank.
func (gs GenesisState) validateAgents(ac address.Codec) error {
	if uint64(len(gs.TransferAgents)) > gs.Params.MaxTransferAgents {
		return fmt.Errorf("%d transfer agents exceed max_transfer_agents %d", len(gs.TransferAgents), gs.Params.MaxTransferAgents)
	}
	var current uint64
	if gs.Epoch != nil {
		current = gs.Epoch.Index
	}
	seen := make(map[string]struct{}, len(gs.TransferAgents))
	for i, ta := range gs.TransferAgents {
		bz, err := CanonicalAddress(ac, ta.Address)
		if err != nil {
			return fmt.Errorf("transfer agent %d address %q: %w", i, ta.Address, err)
		}
		if has(seen, string(bz)) {
			return fmt.Errorf("transfer agent %s listed twice", ta.Address)
		}
		seen[string(bz)] = struct{}{}
		if err := ValidateTransferAgent(ta, current); err != nil {
			return fmt.Errorf("transfer agent %s: %w", ta.Address, err)
		}
	}
	return nil
}

// ValidateTransferAgent checks a stored agent record against the current
// epoch index (0 before the first block).
func ValidateTransferAgent(ta TransferAgent, current uint64) error {
	if err := ta.Bond.Validate(); err != nil {
		return fmt.Errorf("bond: %w", err)
	}
	if !ta.Bond.IsPositive() {
		return fmt.Errorf("bond must be positive, got %s", ta.Bond)
	}
	if ta.RegisteredEpoch > current {
		return fmt.Errorf("registered_epoch %d is after the current epoch %d", ta.RegisteredEpoch, current)
	}
	if ta.LeavingEpoch != 0 && ta.LeavingEpoch != current {
		return fmt.Errorf("leaving_epoch %d must be 0 (serving) or the current epoch %d: its bond is returned when the next epoch starts",
			ta.LeavingEpoch, current)
	}
	s := ta.Standing
	if s.EpochIndex > current {
		return fmt.Errorf("standing epoch_index %d is after the current epoch %d", s.EpochIndex, current)
	}
	if s.StoppedHeight < 0 || s.StoppedHeight > MaxHealthHeight {
		return fmt.Errorf("standing stopped_height %d out of range", s.StoppedHeight)
	}
	return nil
}
