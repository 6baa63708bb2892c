package types

import (
	"context"
	"fmt"

	"github.com/cosmos/gogoproto/proto"

	sdk "github.com/cosmos/cosmos-sdk/types"
)

// EmitEvent emits a typed event, naming its type if that fails.
func EmitEvent(ctx context.Context, ev proto.Message) error {
	if err := sdk.UnwrapSDKContext(ctx).EventManager().EmitTypedEvent(ev); err != nil {
		return fmt.Errorf("emit %s: %w", proto.MessageName(ev), err)
	}
	return nil
}
