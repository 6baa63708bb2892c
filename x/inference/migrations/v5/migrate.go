// Package v5 migrates x/inference from version 4 (liveness attestation
// and traffic) to version 5 (service attestation by the validators'
// canaries).
package v5

import (
	"fmt"

	sdk "github.com/cosmos/cosmos-sdk/types"

	"github.com/inferenced/inferenced/x/inference/keeper"
	"github.com/inferenced/inferenced/x/inference/migrations"
)

// Migrate brings a version-4 store up to version 5: the
// health_cb_service_* params it lacks take their defaults. Breaker records
// decode as they are: a version-4 record has no service window (empty),
// which reads as no service sample yet, and its evidence is traffic or
// attested, so no record is excluded on service before this binary
// excludes one.
func Migrate(ctx sdk.Context, k keeper.Keeper) error {
	p, err := k.Params.Get(ctx)
	if err != nil {
		return fmt.Errorf("load params: %w", err)
	}
	migrations.FillServiceRule(&p)
	return migrations.StoreParams(ctx, k, p)
}
