// Package v3 migrates x/inference from version 2 (one trip rule for both
// sample kinds) to version 3.
package v3

import (
	"fmt"

	sdk "github.com/cosmos/cosmos-sdk/types"

	"github.com/inferenced/inferenced/x/inference/keeper"
	"github.com/inferenced/inferenced/x/inference/migrations"
)

// Migrate brings a version-2 store up to version 3: the health_cb_traffic_*
// params it lacks take their defaults, so traffic samples get their own,
// slower rule. The unprefixed health_cb_* rule (threshold, min samples,
// window, in a row) keeps its stored values and now governs attested
// samples only; a traffic param governance already set is
// kept. Breaker records decode as they are: a traffic window holds up to
// breaker.MaxWindow samples whatever the rule reads of it.
func Migrate(ctx sdk.Context, k keeper.Keeper) error {
	p, err := k.Params.Get(ctx)
	if err != nil {
		return fmt.Errorf("load params: %w", err)
	}
	migrations.FillTrafficRule(&p)
	return migrations.StoreParams(ctx, k, p)
}
