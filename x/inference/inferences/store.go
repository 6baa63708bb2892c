// Package inferences is the inferences' store: every inference by
// (transfer agent, id), the expiry queue of exactly the STARTED ones, the
// prune index of exactly the closed ones, and the last height that pruned.
// It owns and alone writes those collections (prefixes 5, 6, 19, 20); the
// keeper decides when an inference starts, closes or expires, and what its
// outcome does to the breaker, the stats and the agents.
package inferences

import (
	"context"
	"errors"
	"fmt"

	"cosmossdk.io/collections"
	"cosmossdk.io/core/address"
	errorsmod "cosmossdk.io/errors"

	"github.com/cosmos/cosmos-sdk/codec"
	sdk "github.com/cosmos/cosmos-sdk/types"

	"github.com/inferenced/inferenced/x/inference/types"
)

// Key names an inference: its transfer agent's address bytes and its id.
// Ids are unique per agent, so no agent can take another's id.
type Key = collections.Pair[sdk.AccAddress, string]

// HeightKey is an inference at a height, (height, id, agent): the expiry
// queue's and the prune index's entries, ordered by height so a block
// walks exactly the due ones. Within a height the order is by id, as in
// version 3, then agent: the block's expiries reach the breaker in the
// same order as before, and an agent's address bytes (which an account
// can grind) never decide whose miss is applied first.
type HeightKey = collections.Triple[int64, string, sdk.AccAddress]

// The layout's key codecs, written once: the store's collections, the
// migration of the version-3 layout and tools that read the raw store
// build on them.
var (
	KeyCodec       = collections.PairKeyCodec(sdk.AccAddressKey, collections.StringKey)
	HeightKeyCodec = collections.TripleKeyCodec(collections.Int64Key, collections.StringKey, sdk.AccAddressKey)
)

// NewKey is the store key of agent's inference id.
func NewKey(agent sdk.AccAddress, id string) Key { return collections.Join(agent, id) }

// NewHeightKey is the entry of key at height in the expiry queue or prune
// index.
func NewHeightKey(height int64, key Key) HeightKey {
	return collections.Join3(height, key.K2(), key.K1())
}

// keyOf is the inference key of an expiry-queue or prune-index entry.
func keyOf(h HeightKey) Key { return collections.Join(h.K3(), h.K2()) }

// Reads is what the store reads of the rest of x/inference. It never
// writes.
type Reads interface {
	Params(ctx context.Context) (types.Params, error)
}

// Store is the inferences' state. Its collections are unexported: every
// change goes through this package, which keeps the two indexes in step
// with the inferences.
type Store struct {
	ac    address.Codec
	reads Reads

	inferences collections.Map[Key, types.Inference]
	// expiry holds (expiration height, id, agent) of exactly the STARTED
	// inferences, so a block visits exactly the due entries.
	expiry collections.KeySet[HeightKey]
	// prune holds (prune height, id, agent) of exactly the closed
	// inferences, so a block deletes exactly the due ones (prune.go).
	prune collections.KeySet[HeightKey]
	// prunedThrough is the last height at which closed inferences were
	// pruned (absent: none yet), so a query for a missing id says why.
	prunedThrough collections.Item[int64]
}

// NewStore declares the inferences' collections in the module's schema.
func NewStore(sb *collections.SchemaBuilder, cdc codec.BinaryCodec, ac address.Codec, reads Reads) Store {
	return Store{
		ac: ac, reads: reads,
		inferences:    collections.NewMap(sb, types.InferencesPrefix, "inferences", KeyCodec, codec.CollValue[types.Inference](cdc)),
		expiry:        collections.NewKeySet(sb, types.ExpiryQueuePrefix, "expiry_queue", HeightKeyCodec),
		prune:         collections.NewKeySet(sb, types.PruneIndexPrefix, "prune_index", HeightKeyCodec),
		prunedThrough: collections.NewItem(sb, types.PrunedThroughKey, "pruned_through", collections.Int64Value),
	}
}

// KeyOf is the store key of a stored inference, from its transfer agent's
// (canonical) address.
func (s Store) KeyOf(inf types.Inference) (Key, error) {
	agent, err := s.ac.StringToBytes(inf.TransferAgent)
	if err != nil {
		return Key{}, fmt.Errorf("inference %q transfer agent %q: %w", inf.InferenceId, inf.TransferAgent, err)
	}
	return NewKey(agent, inf.InferenceId), nil
}

// Has reports whether an inference is stored under key.
func (s Store) Has(ctx context.Context, key Key) (bool, error) {
	ok, err := s.inferences.Has(ctx, key)
	if err != nil {
		return false, fmt.Errorf("look up inference: %w", err)
	}
	return ok, nil
}

// Get returns agent's inference id. A missing one is
// ErrInferenceNotFound with the reason: it never started, or (once
// anything was pruned) it may have closed and been pruned.
func (s Store) Get(ctx context.Context, agent sdk.AccAddress, id string) (types.Inference, error) {
	inf, err := s.inferences.Get(ctx, NewKey(agent, id))
	if err == nil {
		return inf, nil
	}
	if !errors.Is(err, collections.ErrNotFound) {
		return types.Inference{}, fmt.Errorf("load inference: %w", err)
	}
	reason, err := s.missingReason(ctx)
	if err != nil {
		return types.Inference{}, err
	}
	return types.Inference{}, errorsmod.Wrapf(types.ErrInferenceNotFound, "%q of transfer agent %s: %s", id, spell(s.ac, agent), reason)
}

// Start stores a new STARTED inference and queues its expiry.
func (s Store) Start(ctx context.Context, key Key, inf types.Inference) error {
	if err := s.inferences.Set(ctx, key, inf); err != nil {
		return fmt.Errorf("store inference: %w", err)
	}
	if err := s.expiry.Set(ctx, NewHeightKey(inf.ExpirationHeight, key)); err != nil {
		return fmt.Errorf("queue expiry: %w", err)
	}
	return nil
}

// Close stores a finished or expired inference, drops its expiry entry, so
// it can never be closed twice, and schedules its pruning with the params
// of this block: it is deleted inference_retention_epochs x epoch_length
// blocks after the block that closed it.
func (s Store) Close(ctx context.Context, key Key, inf types.Inference, params types.Params) error {
	if err := s.inferences.Set(ctx, key, inf); err != nil {
		return fmt.Errorf("store inference: %w", err)
	}
	if err := s.expiry.Remove(ctx, NewHeightKey(inf.ExpirationHeight, key)); err != nil {
		return fmt.Errorf("dequeue expiry: %w", err)
	}
	return s.indexForPruning(ctx, key, inf, params.PruneHeight(inf.EndHeight))
}

// indexForPruning schedules a closed inference's deletion at height.
func (s Store) indexForPruning(ctx context.Context, key Key, inf types.Inference, height int64) error {
	if err := s.prune.Set(ctx, NewHeightKey(height, key)); err != nil {
		return fmt.Errorf("index inference %q for pruning: %w", inf.InferenceId, err)
	}
	return nil
}

// spell is an address as errors show it: the module's bech32 spelling, or
// hex if it has none.
func spell(ac address.Codec, a sdk.AccAddress) string {
	s, err := ac.BytesToString(a)
	if err != nil {
		return fmt.Sprintf("%X", []byte(a))
	}
	return s
}
