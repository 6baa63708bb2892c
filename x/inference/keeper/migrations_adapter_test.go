package keeper_test

import (
	"context"
	"fmt"

	"cosmossdk.io/collections"

	sdk "github.com/cosmos/cosmos-sdk/types"

	"github.com/inferenced/inferenced/x/inference/keeper"
	"github.com/inferenced/inferenced/x/inference/migrations"
	v2 "github.com/inferenced/inferenced/x/inference/migrations/v2"
	v3 "github.com/inferenced/inferenced/x/inference/migrations/v3"
	v4 "github.com/inferenced/inferenced/x/inference/migrations/v4"
	v5 "github.com/inferenced/inferenced/x/inference/migrations/v5"
	v6 "github.com/inferenced/inferenced/x/inference/migrations/v6"
	v7 "github.com/inferenced/inferenced/x/inference/migrations/v7"
	"github.com/inferenced/inferenced/x/inference/types"
)

// migrator runs the module's migration steps (x/inference/migrations) on
// the fixture's keeper, and writes state as older versions did.
type migrator struct{ k keeper.Keeper }

func newMigrator(k keeper.Keeper) migrator { return migrator{k: k} }

func (m migrator) Migrate1to2(ctx sdk.Context) error { return v2.Migrate(ctx, m.k) }
func (m migrator) Migrate2to3(ctx sdk.Context) error { return v3.Migrate(ctx, m.k) }
func (m migrator) Migrate3to4(ctx sdk.Context) error { return v4.Migrate(ctx, m.k) }
func (m migrator) Migrate4to5(ctx sdk.Context) error { return v5.Migrate(ctx, m.k) }
func (m migrator) Migrate5to6(ctx sdk.Context) error { return v6.Migrate(ctx, m.k) }
func (m migrator) Migrate6to7(ctx sdk.Context) error { return v7.Migrate(ctx, m.k) }

// Migrate3to4InBatches is Migrate3to4 with a batch size tests can shrink,
// so a small store crosses batch boundaries.
func (m migrator) Migrate3to4InBatches(ctx sdk.Context, batch int) error {
	return v4.MigrateInBatches(ctx, m.k, batch)
}

// SetV3Inference stores inf as a version-3 binary did: keyed by id alone,
// and, when STARTED, queued for expiry by (expiration height, id).
func (m migrator) SetV3Inference(ctx context.Context, inf types.Inference) error {
	old := migrations.NewV3Layout(m.k)
	if err := old.Inferences.Set(ctx, inf.InferenceId, inf); err != nil {
		return err
	}
	if inf.Status != types.INFERENCE_STATUS_STARTED {
		return nil
	}
	return old.Expiry.Set(ctx, collections.Join(inf.ExpirationHeight, inf.InferenceId))
}

// SetV3Expiry stores a version-3 expiry entry (expiration height, id).
func (m migrator) SetV3Expiry(ctx context.Context, height int64, id string) error {
	return migrations.NewV3Layout(m.k).Expiry.Set(ctx, collections.Join(height, id))
}

// setRawParticipant stores bz as addr's participant record byte for byte,
// so tests can write a record in an older layout.
func setRawParticipant(ctx context.Context, k keeper.Keeper, addr sdk.AccAddress, bz []byte) error {
	kc := k.Participants.KeyCodec()
	key := make([]byte, kc.Size(addr))
	if _, err := kc.Encode(key, addr); err != nil {
		return fmt.Errorf("encode participant key: %w", err)
	}
	return k.StoreService().OpenKVStore(ctx).Set(append(k.Participants.GetPrefix(), key...), bz)
}
