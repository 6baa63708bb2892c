package keeper

import (
	"context"
	"fmt"

	sdk "github.com/cosmos/cosmos-sdk/types"
)

// MigrateParticipantsTo4 exposes the participants' part of Migrate3to4 to
// tests until the integrator wires it into Migrate3to4.
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
