package keeper

import (
	"context"
	"errors"
	"fmt"

	"cosmossdk.io/collections"
)

// BundleV3Switch is the height from which blocks carry their health bundle
// in the HEALTH3 layout (BundleV3Height); set is false in a store from
// before version 6, whose blocks carry HEALTH2. abci/proposals reads it
// (proposals.Switch) to build and check each block's layout.
func (k Keeper) BundleV3Switch(ctx context.Context) (height int64, set bool, err error) {
	height, err = k.BundleV3Height.Get(ctx)
	switch {
	case errors.Is(err, collections.ErrNotFound):
		return 0, false, nil
	case err != nil:
		return 0, false, fmt.Errorf("load bundle_v3_height: %w", err)
	}
	return height, true, nil
}
