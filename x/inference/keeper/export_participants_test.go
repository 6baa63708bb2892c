package keeper

import (
	"context"
	"fmt"

	sdk "github.com/cosmos/cosmos-sdk/types"
)

// MigrateParticipantsTo4 exposes the participants' part of Migrate3to4 to
// tests, which run it alone on a version-3 registry.
func (m Migrator) MigrateParticipantsTo4(ctx context.Context) error {
	return m.migrateParticipantsTo4(ctx)
}

// SetRawParticipant stores bz as addr's participant record byte for byte,
// so tests can write a record in an older layout.
func (k Keeper) SetRawParticipant(ctx context.Context, addr sdk.AccAddress, bz []byte) error {
	kc := k.Participants.KeyCodec()
	key := make([]byte, kc.Size(addr))
	if _, err := kc.Encode(key, addr); err != nil {
		return fmt.Errorf("encode participant key: %w", err)
	}
	return k.storeService.OpenKVStore(ctx).Set(append(k.Participants.GetPrefix(), key...), bz)
}

// Migrate3to4InBatches exposes Migrate3to4 with a batch size tests can
// shrink, so a small store crosses batch boundaries.
func (m Migrator) Migrate3to4InBatches(ctx sdk.Context, batch int) error {
	return m.migrate3to4InBatches(ctx, batch)
}
