package testkit

import (
	"testing"

	abci "github.com/cometbft/cometbft/abci/types"
	"github.com/cosmos/gogoproto/proto"
	"github.com/stretchr/testify/require"

	sdk "github.com/cosmos/cosmos-sdk/types"
)

// ParseEvents returns the typed events of type T among evs, in order.
func ParseEvents[T proto.Message](t testing.TB, evs []abci.Event) []T {
	t.Helper()
	var zero T
	name := proto.MessageName(zero)
	var out []T
	for _, ev := range evs {
		if ev.Type != name {
			continue
		}
		msg, err := sdk.ParseTypedEvent(ev)
		require.NoError(t, err)
		out = append(out, msg.(T))
	}
	return out
}

// TypedEvents returns the typed events of type T emitted on ctx so far.
func TypedEvents[T proto.Message](t testing.TB, ctx sdk.Context) []T {
	t.Helper()
	return ParseEvents[T](t, ctx.EventManager().ABCIEvents())
}
