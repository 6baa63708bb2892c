package v4

import (
	"fmt"

	"cosmossdk.io/collections"

	sdk "github.com/cosmos/cosmos-sdk/types"

	"github.com/inferenced/inferenced/x/inference/keeper"
	"github.com/inferenced/inferenced/x/inference/migrations"
	"github.com/inferenced/inferenced/x/inference/types"
)

// v3Keys ranges over exactly the version-3 inference keys: an id starts
// with one of [-.0-9:A-Z_a-z] (ValidateInferenceID), all at or above '-',
// while a version-4 key starts with its agent's address length (20 or 32),
// below it. So the walk never decodes a version-4 key as an id.
func v3Keys() collections.Ranger[string] {
	return new(collections.Range[string]).StartInclusive(v3KeyFloor)
}

// v3KeyFloor is the least version-3 inference key.
const v3KeyFloor = "-"

// v3KeysAfter is v3Keys after id: a batch resumes past the keys the last
// one deleted instead of walking their tombstones again (the upgrade
// block's cache still holds every deletion until it commits).
func v3KeysAfter(id string) collections.Ranger[string] {
	if id == "" {
		return v3Keys()
	}
	return new(collections.Range[string]).StartExclusive(id)
}

// check refuses, before anything is written, every version-3 store the
// migration could not finish: a key that is not its inference's id, a
// value that does not decode, a key below every version-3 id (it would
// be left behind), a transfer agent that is no address (no version-4 key)
// or one so long its version-4 key would sort among the version-3 ids, an
// expiry entry that names no STARTED inference at its expiration height, a
// probe that names no inference, a participant whose address does not
// decode. It streams: it holds one entry at a time.
func check(ctx sdk.Context, k keeper.Keeper, old migrations.V3Layout) error {
	below := new(collections.Range[string]).EndExclusive(v3KeyFloor)
	if err := old.Inferences.Walk(ctx, below, func(id string, _ types.Inference) (bool, error) {
		return true, fmt.Errorf("inference key %q sorts below every version-3 id", id)
	}); err != nil {
		return fmt.Errorf("read inference keys below %q: %w", v3KeyFloor, err)
	}
	if err := old.Inferences.Walk(ctx, v3Keys(), func(id string, inf types.Inference) (bool, error) {
		if id != inf.InferenceId {
			return true, fmt.Errorf("version-3 inference key %q holds inference %q", id, inf.InferenceId)
		}
		// The id sits inside the version-4 expiry and prune keys, which
		// refuse some bytes: check it as every start did.
		if err := types.ValidateInferenceID(id); err != nil {
			return true, fmt.Errorf("version-3 inference %q: %w", id, err)
		}
		key, err := k.Inferences().KeyOf(inf)
		if err != nil {
			return true, err
		}
		if len(key.K1()) >= int(v3KeyFloor[0]) {
			return true, fmt.Errorf("inference %q transfer agent %q: a %d-byte address would key it among the version-3 ids",
				id, inf.TransferAgent, len(key.K1()))
		}
		return false, nil
	}); err != nil {
		return fmt.Errorf("read version-3 inferences: %w", err)
	}
	if err := old.Expiry.Walk(ctx, nil, func(e collections.Pair[int64, string]) (bool, error) {
		inf, err := old.Inferences.Get(ctx, e.K2())
		if err != nil {
			return true, fmt.Errorf("version-3 expiry entry (%d, %q): %w", e.K1(), e.K2(), err)
		}
		if inf.Status != types.INFERENCE_STATUS_STARTED || inf.ExpirationHeight != e.K1() {
			return true, fmt.Errorf("version-3 expiry entry (%d, %q) does not match its inference (%s, expiring at %d)",
				e.K1(), e.K2(), inf.Status, inf.ExpirationHeight)
		}
		return false, nil
	}); err != nil {
		return fmt.Errorf("read version-3 expiry queue: %w", err)
	}
	if err := k.Breaker().EachRecord(ctx, func(h types.ExecutorHealth) error {
		if !unattributed(h) {
			return nil
		}
		if _, err := old.Inferences.Get(ctx, h.ProbeInferenceId); err != nil {
			return fmt.Errorf("probe inference %q: %w", h.ProbeInferenceId, err)
		}
		return nil
	}); err != nil {
		return err
	}
	if err := k.Participants.Walk(ctx, nil, func(_ sdk.AccAddress, q types.Participant) (bool, error) {
		if _, err := k.AddressCodec().StringToBytes(q.Address); err != nil {
			return true, fmt.Errorf("participant address %q: %w", q.Address, err)
		}
		return false, nil
	}); err != nil {
		return fmt.Errorf("read participants: %w", err)
	}
	return nil
}
