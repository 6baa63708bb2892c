// Package keeper holds x/inference state and the state transitions of
// participants, epochs and inferences. Message and query servers are thin
// shells over these methods.
package keeper

import (
	"errors"
	"fmt"
	"sync/atomic"

	"cosmossdk.io/collections"
	"cosmossdk.io/core/address"
	corestore "cosmossdk.io/core/store"

	"github.com/cosmos/cosmos-sdk/codec"
	sdk "github.com/cosmos/cosmos-sdk/types"

	"github.com/inferenced/inferenced/x/inference/health"
	"github.com/inferenced/inferenced/x/inference/routecache"
	"github.com/inferenced/inferenced/x/inference/types"
)

// Keeper is the x/inference keeper.
type Keeper struct {
	cdc          codec.BinaryCodec
	addressCodec address.Codec
	authority    string
	// bank moves transfer-agent and participant bonds into and out of the
	// module account.
	bank types.BankKeeper
	// storeService opens the module store; the query path's route tables
	// read stored bytes through it (collections read everything else).
	storeService corestore.KVStoreService

	// seams is shared by every copy of the keeper (the module and the
	// servers hold copies), so hooks set at wiring reach all of them.
	seams *seams
	// health is the circuit breaker's store, the only writer of its
	// collections (prefixes 8-12, 14, 15).
	health health.Store

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
	// Inferences are keyed by (transfer agent, id): ids are unique per
	// agent (inference_keys.go).
	Inferences collections.Map[InferenceKey, types.Inference]
	// ExpiryQueue holds (expiration height, id, agent) of STARTED
	// inferences, so EndBlock visits exactly the due entries.
	ExpiryQueue collections.KeySet[HeightKey]
	// PruneIndex holds (prune height, id, agent) of exactly the closed
	// inferences, so EndBlock deletes exactly the due ones (prune.go).
	PruneIndex collections.KeySet[HeightKey]
	// PrunedThrough is the last height at which closed inferences were
	// pruned (absent: none yet), so a query for a missing id says why.
	PrunedThrough collections.Item[int64]

	// ModelWeights is each model's total epoch weight (the members serving
	// it), written with the epoch group; the exclusion cap reads it.
	ModelWeights collections.Map[string, uint64]

	// TransferAgents are the accounts allowed to start inferences, each
	// with its bond (held by the module account: its balance covers the sum
	// of the bonds) and its standing this epoch.
	TransferAgents collections.Map[sdk.AccAddress, types.TransferAgent]
	// TransferAgentCount is the size of TransferAgents, kept so that
	// registration can enforce max_transfer_agents in O(1).
	TransferAgentCount collections.Item[uint64]
	// LeavingAgents holds (release epoch, agent) of exactly the agents with
	// leaving_epoch != 0, keyed leaving_epoch+1, so the boundary that starts
	// an epoch visits only the agents it releases.
	LeavingAgents collections.KeySet[collections.Pair[uint64, sdk.AccAddress]]
	// LeavingParticipants holds (release epoch, participant) of exactly the
	// participants with leaving_epoch != 0, keyed leaving_epoch+1, so the
	// boundary visits only the participants it releases.
	LeavingParticipants collections.KeySet[collections.Pair[uint64, sdk.AccAddress]]
}

type seams struct {
	hooks  types.InferenceHooks
	health HealthStage
	// stageGeneration counts SetHealthStage calls: a route table built
	// with one stage is never served under another.
	stageGeneration uint64
	// routes are the query path's route tables by committed height
	// (RandomExecutorCommitted); node-local memory, never state.
	routes *routecache.Cache[*routeTable]
	// queried is the committed height of the last client query of a route
	// (WarmRouteTables builds ahead only for a node that is asked).
	queried atomic.Int64
}

// NewKeeper builds the keeper. authority is the only address allowed to
// change params (normally the x/gov module account); bank holds the
// transfer-agent bonds in the module account.
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
		bank:             bank,
		storeService:     storeService,
		seams:            &seams{routes: routecache.New[*routeTable](routeTableHeights)},
		Params:           collections.NewItem(sb, types.ParamsKey, "params", codec.CollValue[types.Params](cdc)),
		Participants:     collections.NewMap(sb, types.ParticipantsPrefix, "participants", sdk.AccAddressKey, codec.CollValue[types.Participant](cdc)),
		ParticipantCount: collections.NewItem(sb, types.ParticipantCountKey, "participant_count", collections.Uint64Value),
		Epoch:            collections.NewItem(sb, types.EpochKey, "epoch", codec.CollValue[types.Epoch](cdc)),
		EpochMembers:     collections.NewMap(sb, types.EpochMembersPrefix, "epoch_members", collections.Uint32Key, codec.CollValue[types.EpochMember](cdc)),
		EpochMemberIndex: collections.NewMap(sb, types.EpochMemberIndexPrefix, "epoch_member_index", sdk.AccAddressKey, collections.Uint32Value),
		Inferences:       collections.NewMap(sb, types.InferencesPrefix, "inferences", inferenceKeyCodec, codec.CollValue[types.Inference](cdc)),
		ExpiryQueue:      collections.NewKeySet(sb, types.ExpiryQueuePrefix, "expiry_queue", heightKeyCodec),
		PruneIndex:       collections.NewKeySet(sb, types.PruneIndexPrefix, "prune_index", heightKeyCodec),
		PrunedThrough:    collections.NewItem(sb, types.PrunedThroughKey, "pruned_through", collections.Int64Value),
		ModelWeights:     collections.NewMap(sb, types.ModelWeightsPrefix, "model_weights", collections.StringKey, collections.Uint64Value),
		TransferAgents: collections.NewMap(sb, types.TransferAgentsPrefix, "transfer_agents", sdk.AccAddressKey,
			codec.CollValue[types.TransferAgent](cdc)),
		TransferAgentCount: collections.NewItem(sb, types.TransferAgentCountKey, "transfer_agent_count", collections.Uint64Value),
		LeavingAgents: collections.NewKeySet(sb, types.LeavingAgentsPrefix, "leaving_agents",
			collections.PairKeyCodec(collections.Uint64Key, sdk.AccAddressKey)),
		LeavingParticipants: collections.NewKeySet(sb, types.LeavingParticipantsPrefix, "leaving_participants",
			collections.PairKeyCodec(collections.Uint64Key, sdk.AccAddressKey)),
	}
	k.health = health.NewStore(sb, cdc, addressCodec, breakerView{k: k})
	schema, err := sb.Build()
	if err != nil {
		return Keeper{}, fmt.Errorf("build x/inference schema: %w", err)
	}
	k.Schema = schema
	k.seams.health = DefaultHealthStage(k)
	return k, nil
}

// Authority is the address allowed to change params.
func (k Keeper) Authority() string { return k.authority }

// AddressCodec is the account address codec.
func (k Keeper) AddressCodec() address.Codec { return k.addressCodec }

// SetHooks installs the inference hooks. It may be called once, at wiring;
// a second call is refused, as it would silently drop the first hooks.
func (k Keeper) SetHooks(h types.InferenceHooks) error {
	if k.seams.hooks != nil {
		return errors.New("x/inference: hooks already set")
	}
	k.seams.hooks = h
	return nil
}

// SetHealthStage replaces the health stage of the selection filter chain,
// which is the circuit breaker unless replaced (tests use their own).
func (k Keeper) SetHealthStage(h HealthStage) {
	k.seams.health = h
	k.seams.stageGeneration++
}
