package keeper

import (
	"context"
	"fmt"

	"github.com/inferenced/inferenced/x/inference/escrow"
	"github.com/inferenced/inferenced/x/inference/types"
)

// importParticipants stores the genesis participants and rebuilds
// ParticipantCount and the LeavingParticipants index from them (a leaving
// participant is released when the epoch after its leaving_epoch starts).
func (k Keeper) importParticipants(ctx context.Context, participants []types.Participant) error {
	for _, p := range participants {
		if err := k.SetParticipant(ctx, p); err != nil {
			return err
		}
		if p.LeavingEpoch == 0 {
			continue
		}
		addr, err := k.addressCodec.StringToBytes(p.Address)
		if err != nil {
			return fmt.Errorf("participant address %q: %w", p.Address, err)
		}
		if err := k.LeavingParticipants.Set(ctx, escrow.LeavingKey(p.LeavingEpoch, addr)); err != nil {
			return fmt.Errorf("index leaving participant: %w", err)
		}
	}
	if err := k.ParticipantCount.Set(ctx, uint64(len(participants))); err != nil {
		return fmt.Errorf("store participant count: %w", err)
	}
	return nil
}
