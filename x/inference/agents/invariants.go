package agents

import (
	"context"
	"fmt"

	"cosmossdk.io/collections"

	sdk "github.com/cosmos/cosmos-sdk/types"

	"github.com/inferenced/inferenced/x/inference/escrow"
	"github.com/inferenced/inferenced/x/inference/types"
)

// Invariants checks that what the store derives from the agents is in
// step with them: the count equals the agents, and the leaving index holds
// exactly the agents that asked to leave, keyed by the epoch that releases
// them. It walks every collection: for invariant checks (tests,
// simulations, an operator's audit), never for a block.
func (s Store) Invariants(ctx context.Context) error {
	leaving := map[string]bool{}
	n := uint64(0)
	if err := s.agents.Walk(ctx, nil, func(addr sdk.AccAddress, ta types.TransferAgent) (bool, error) {
		n++
		if ta.LeavingEpoch != 0 {
			k := escrow.LeavingKey(ta.LeavingEpoch, addr)
			leaving[fmt.Sprintf("%d/%X", k.K1(), []byte(k.K2()))] = true
		}
		return false, nil
	}); err != nil {
		return fmt.Errorf("walk transfer agents: %w", err)
	}
	count, err := s.Count(ctx)
	if err != nil {
		return err
	}
	if count != n {
		return fmt.Errorf("transfer agent count %d, but %d agents", count, n)
	}
	indexed := 0
	if err := s.leaving.Walk(ctx, nil, func(k collections.Pair[uint64, sdk.AccAddress]) (bool, error) {
		indexed++
		if !leaving[fmt.Sprintf("%d/%X", k.K1(), []byte(k.K2()))] {
			return true, fmt.Errorf("leaving entry (%d, %s) names no agent leaving in epoch %d", k.K1(), k.K2(), k.K1()-1)
		}
		return false, nil
	}); err != nil {
		return err
	}
	if indexed != len(leaving) {
		return fmt.Errorf("%d leaving entries for %d leaving agents", indexed, len(leaving))
	}
	return nil
}
