// Package keeper holds x/inference state and the state transitions of
// participants, epochs and inferences, and composes the stores that own the
// rest: the circuit breaker's (x/inference/breakerstore) and the transfer
// agents' (x/inference/agents). Message and query servers are thin shells
// over these methods. A Keeper is a plain value over the store: it holds
// no node memory (the query path's route tables are x/inference/routes).
package keeper

import (
	"errors"
	"fmt"

	"cosmossdk.io/collections"
	"cosmossdk.io/core/address"
	corestore "cosmossdk.io/core/store"

	"github.com/cosmos/cosmos-sdk/codec"
	sdk "github.com/cosmos/cosmos-sdk/types"

	"github.com/inferenced/inferenced/x/inference/agents"
	"github.com/inferenced/inferenced/x/inference/breakerstore"
	"github.com/inferenced/inferenced/x/inference/escrow"
	"github.com/inferenced/inferenced/x/inference/inferences"
	"github.com/inferenced/inferenced/x/inference/types"
	"github.com/inferenced/inferenced/x/inference/verdictref"
)

// Keeper is the x/inference keeper.
type Keeper struct {
	cdc          codec.BinaryCodec
	addressCodec address.Codec
	authority    string
	// escrow holds participant bonds (and, through agents, agents' bonds)
	// in the module account.
	escrow escrow.Escrow
	// storeService opens the module store (migrations of older layouts and
	// the query path's route tables read raw bytes through it).
	storeService corestore.KVStoreService

	// breaker is the circuit breaker's store, the only writer of its
	// collections (prefixes 8-12, 14, 15).
	breaker breakerstore.Store
	// agents is the transfer agents' store, the only writer of its
	// collections (prefixes 16-18).
	agents agents.Store
	// inferences is the inferences' store, the only writer of its
	// collections (prefixes 5, 6, 19, 20).
	inferences inferences.Store

	Schema       collections.Schema
	Params       collections.Item[types.Params]
	Participants collections.Map[sdk.AccAddress, types.Participant]
	// ParticipantCount is the size of Participants, kept so that
	// registration can enforce max_participants in O(1).
	ParticipantCount collections.Item[uint64]
	Epoch            collections.Item[types.Epoch]
	// EpochMembers holds the current epoch group by index (address order).
	EpochMembers collections.Map[uint32, types.EpochMember]
	// EpochMemberIndex maps a member's address to its index in EpochMembers.
	EpochMemberIndex collections.Map[sdk.AccAddress, uint32]
	// ModelWeights is each model's total epoch weight (the members serving
	// it), written with the epoch group; the exclusion cap reads it.
	ModelWeights collections.Map[string, uint64]

	// LeavingParticipants holds (release epoch, participant) of exactly the
	// participants with leaving_epoch != 0, keyed leaving_epoch+1, so the
	// boundary visits only the participants it releases.
	LeavingParticipants escrow.Leaving
	// BundleV3Height is the first height whose block carries its health
	// bundle in the HEALTH3 layout; blocks before it carry HEALTH2
	// (abci/proposals reads it through BundleV3Switch). Written once, by
	// InitGenesis (the genesis value: 1 on a new chain) or by the version-5
	// to 6 migration (the upgrade block's height + 1), never changed after;
	// absent only in a store from before version 6.
	BundleV3Height collections.Item[int64]
	// verdictRef is the reference vote extensions' verdicts are relative
	// to (verdictref.Reference): written only by ApplyHealth, from
	// bundle_v3_height on, when a block's samples differ from the current
	// ones; absent before (every verdict then reads as it is).
	verdictRef collections.Item[verdictref.Reference]
}

// NewKeeper builds the keeper. authority is the only address allowed to
// change params (normally the x/gov module account); bank holds the
// transfer-agent and participant bonds in the module account.
func NewKeeper(cdc codec.BinaryCodec, storeService corestore.KVStoreService, addressCodec address.Codec, authority string,
	bank types.BankKeeper,
) (Keeper, error) {
	if _, err := addressCodec.StringToBytes(authority); err != nil {
		return Keeper{}, fmt.Errorf("invalid authority address %q: %w", authority, err)
	}
	if bank == nil {
		return Keeper{}, errors.New("x/inference needs a bank keeper: it holds the transfer-agent bonds")
	}
	sb := collections.NewSchemaBuilder(storeService)
	k := Keeper{
		cdc:              cdc,
		addressCodec:     addressCodec,
		authority:        authority,
		escrow:           escrow.New(bank),
		storeService:     storeService,
		Params:           collections.NewItem(sb, types.ParamsKey, "params", codec.CollValue[types.Params](cdc)),
		Participants:     collections.NewMap(sb, types.ParticipantsPrefix, "participants", sdk.AccAddressKey, codec.CollValue[types.Participant](cdc)),
		ParticipantCount: collections.NewItem(sb, types.ParticipantCountKey, "participant_count", collections.Uint64Value),
		Epoch:            collections.NewItem(sb, types.EpochKey, "epoch", codec.CollValue[types.Epoch](cdc)),
		EpochMembers:     collections.NewMap(sb, types.EpochMembersPrefix, "epoch_members", collections.Uint32Key, codec.CollValue[types.EpochMember](cdc)),
		EpochMemberIndex: collections.NewMap(sb, types.EpochMemberIndexPrefix, "epoch_member_index", sdk.AccAddressKey, collections.Uint32Value),
		ModelWeights:     collections.NewMap(sb, types.ModelWeightsPrefix, "model_weights", collections.StringKey, collections.Uint64Value),
		LeavingParticipants: collections.NewKeySet(sb, types.LeavingParticipantsPrefix, "leaving_participants",
			collections.PairKeyCodec(collections.Uint64Key, sdk.AccAddressKey)),
		BundleV3Height: collections.NewItem(sb, types.BundleV3HeightKey, "bundle_v3_height", collections.Int64Value),
		verdictRef:     collections.NewItem(sb, types.VerdictReferenceKey, "verdict_reference", verdictref.Codec{}),
	}
	r := &reads{k: k}
	k.breaker = breakerstore.NewStore(sb, cdc, addressCodec, r)
	k.agents = agents.NewStore(sb, cdc, addressCodec, r, k.escrow)
	k.inferences = inferences.NewStore(sb, cdc, addressCodec, r)
	schema, err := sb.Build()
	if err != nil {
		return Keeper{}, fmt.Errorf("build x/inference schema: %w", err)
	}
	k.Schema = schema
	return k, nil
}

// Authority is the address allowed to change params.
func (k Keeper) Authority() string { return k.authority }

// AddressCodec is the account address codec.
func (k Keeper) AddressCodec() address.Codec { return k.addressCodec }

// StoreService is the module's store, for code that reads an older layout
// (migrations) or raw bytes (the query path's route tables).
func (k Keeper) StoreService() corestore.KVStoreService { return k.storeService }

// Codec is the module's binary codec.
func (k Keeper) Codec() codec.BinaryCodec { return k.cdc }

// Breaker is the circuit breaker's store, for the reads and the upkeep
// other x/inference packages do through its own methods (queries, routes,
// migrations).
func (k Keeper) Breaker() breakerstore.Store { return k.breaker }

// Agents is the transfer agents' store.
func (k Keeper) Agents() agents.Store { return k.agents }

// Inferences is the inferences' store.
func (k Keeper) Inferences() inferences.Store { return k.inferences }
