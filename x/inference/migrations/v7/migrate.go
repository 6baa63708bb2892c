// Package v7 migrates x/inference from version 6 to version 7: the
// breaker's held bits (prefix 24), by group index the members the breaker
// holds a record on and the quiet ones among them, built from the records.
// The streaks item (prefix 23) stays absent: the records a version-6 step
// wrote carry every field themselves, and the first step after the
// upgrade visits every sample, as that step did, and writes the item.
package v7

import (
	"fmt"

	sdk "github.com/cosmos/cosmos-sdk/types"

	"github.com/inferenced/inferenced/x/inference/keeper"
)

// Migrate brings a version-6 store up to version 7: one walk of the
// breaker records and one group-index lookup per record
// (breakerstore.Store.BuildHeldBits, which replaces any held bits: the
// earlier steps of the v2 upgrade's chain of migrations rewrite records
// through save, which already keeps them). A store with a streaks item is
// refused: only a version-7 step writes one.
func Migrate(ctx sdk.Context, k keeper.Keeper) error {
	if carried, err := k.Breaker().HasStreaks(ctx); err != nil {
		return err
	} else if carried {
		return fmt.Errorf("breaker streaks item present in a version-6 store")
	}
	return k.Breaker().BuildHeldBits(ctx)
}
