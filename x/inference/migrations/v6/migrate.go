// Package v6 migrates x/inference from version 5 to version 6: the health
// bundle's layout switches from HEALTH2 (DEFLATE) to HEALTH3 (zstd) at a
// height the store records.
package v6

import (
	"fmt"

	sdk "github.com/cosmos/cosmos-sdk/types"

	"github.com/inferenced/inferenced/x/inference/keeper"
)

// Migrate brings a version-5 store up to version 6: it records that blocks
// from the next one on carry their health bundle in the HEALTH3 layout
// (bundle_v3_height = the migrating block's height + 1). The migrating
// block itself was proposed by the previous binary in HEALTH2; its
// pre-blocker, which runs after this migration, reads it as it is. A store
// that already records a switch height is refused: the height is written
// once, and a version-5 store never has one.
func Migrate(ctx sdk.Context, k keeper.Keeper) error {
	if _, set, err := k.BundleV3Switch(ctx); err != nil {
		return err
	} else if set {
		return fmt.Errorf("bundle_v3_height is already set in a version-5 store")
	}
	if err := k.BundleV3Height.Set(ctx, ctx.BlockHeight()+1); err != nil {
		return fmt.Errorf("store bundle_v3_height: %w", err)
	}
	return nil
}
