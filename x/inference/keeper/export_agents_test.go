package keeper

import (
	"context"

	sdk "github.com/cosmos/cosmos-sdk/types"
)

// The standing transitions, exposed to the agent tests; inferences.go and
// health.go call them in the node.

func (k Keeper) AgentStarting(ctx context.Context, agent sdk.AccAddress) error {
	return k.agentStarting(ctx, agent)
}

func (k Keeper) AgentFinished(ctx context.Context, agent string) error {
	return k.agentFinished(ctx, agent)
}

func (k Keeper) ChargeMiss(ctx context.Context, agent string) error { return k.chargeMiss(ctx, agent) }

func (k Keeper) RefundMiss(ctx context.Context, agent string) error { return k.refundMiss(ctx, agent) }

func (k Keeper) CountCorroborated(ctx context.Context, agent string) error {
	return k.countCorroborated(ctx, agent)
}
