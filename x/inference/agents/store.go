// Package agents is the transfer agents' store: the accounts allowed to
// start inferences, each with its bond (held in escrow) and its standing
// this epoch. It owns and alone writes its collections (prefixes 16-18);
// what it reads of the rest of the module (params, the epoch) comes through
// Reads.
package agents

import (
	"context"
	"errors"
	"fmt"

	"cosmossdk.io/collections"
	"cosmossdk.io/core/address"

	"github.com/cosmos/cosmos-sdk/codec"
	sdk "github.com/cosmos/cosmos-sdk/types"
	"github.com/cosmos/cosmos-sdk/types/query"

	"github.com/inferenced/inferenced/x/inference/escrow"
	"github.com/inferenced/inferenced/x/inference/types"
)

// Reads is what the store reads of the rest of x/inference. It never writes.
type Reads interface {
	// Params are the module's params.
	Params(ctx context.Context) (types.Params, error)
	// Epoch is the running epoch, or types.ErrNoEpoch before the first block.
	Epoch(ctx context.Context) (types.Epoch, error)
}

// Store is the transfer agents' state. Its collections are unexported:
// every change goes through this package.
type Store struct {
	ac     address.Codec
	reads  Reads
	escrow escrow.Escrow

	// agents are the registered transfer agents, each with its bond (the
	// module account's balance covers the sum of the bonds) and its
	// standing this epoch.
	agents collections.Map[sdk.AccAddress, types.TransferAgent]
	// count is the size of agents, so registration enforces
	// max_transfer_agents in O(1).
	count collections.Item[uint64]
	// leaving holds (release epoch, agent) of exactly the agents with
	// leaving_epoch != 0, keyed leaving_epoch+1, so the boundary that starts
	// an epoch visits only the agents it releases.
	leaving escrow.Leaving
}

// NewStore declares the agents' collections in the module's schema.
func NewStore(sb *collections.SchemaBuilder, cdc codec.BinaryCodec, ac address.Codec, reads Reads, e escrow.Escrow) Store {
	return Store{
		ac: ac, reads: reads, escrow: e,
		agents: collections.NewMap(sb, types.TransferAgentsPrefix, "transfer_agents", sdk.AccAddressKey,
			codec.CollValue[types.TransferAgent](cdc)),
		count: collections.NewItem(sb, types.TransferAgentCountKey, "transfer_agent_count", collections.Uint64Value),
		leaving: collections.NewKeySet(sb, types.LeavingAgentsPrefix, "leaving_agents",
			collections.PairKeyCodec(collections.Uint64Key, sdk.AccAddressKey)),
	}
}

// epochIndexOrZero is the current epoch index, 0 before the first block
// (genesis transactions run then).
func (s Store) epochIndexOrZero(ctx context.Context) (uint64, error) {
	epoch, err := s.reads.Epoch(ctx)
	if errors.Is(err, types.ErrNoEpoch) {
		return 0, nil
	}
	return epoch.Index, err
}

// Get returns the agent at addr; collections.ErrNotFound if there is none.
func (s Store) Get(ctx context.Context, addr sdk.AccAddress) (types.TransferAgent, error) {
	return s.agents.Get(ctx, addr)
}

// Count is the number of registered agents (leaving ones included until
// released).
func (s Store) Count(ctx context.Context) (uint64, error) {
	n, err := s.count.Get(ctx)
	if err != nil && !errors.Is(err, collections.ErrNotFound) {
		return 0, fmt.Errorf("load transfer agent count: %w", err)
	}
	return n, nil
}

// Page pages through the agents in address order as the queries show them
// (View). A bad page request is returned as an error of its own kind.
func (s Store) Page(ctx context.Context, page *query.PageRequest, params types.Params, index uint64) ([]types.TransferAgentView, *query.PageResponse, error) {
	return query.CollectionPaginate(ctx, s.agents, page,
		func(_ sdk.AccAddress, ta types.TransferAgent) (types.TransferAgentView, error) {
			return View(ta, params, index), nil
		})
}

// InitGenesis stores the genesis agents and rebuilds the count and the
// leaving index from them.
func (s Store) InitGenesis(ctx context.Context, agents []types.TransferAgent) error {
	for _, ta := range agents {
		addr, err := s.ac.StringToBytes(ta.Address)
		if err != nil {
			return fmt.Errorf("transfer agent address %q: %w", ta.Address, err)
		}
		if err := s.agents.Set(ctx, addr, ta); err != nil {
			return fmt.Errorf("store transfer agent: %w", err)
		}
		if ta.LeavingEpoch != 0 {
			if err := s.leaving.Set(ctx, escrow.LeavingKey(ta.LeavingEpoch, addr)); err != nil {
				return fmt.Errorf("index leaving agent: %w", err)
			}
		}
	}
	if err := s.count.Set(ctx, uint64(len(agents))); err != nil {
		return fmt.Errorf("store transfer agent count: %w", err)
	}
	return nil
}

// ExportGenesis appends every agent, in address order, as stored (a stale
// standing is exported as is and still reads as zero after import).
func (s Store) ExportGenesis(ctx context.Context, gs *types.GenesisState) error {
	if err := s.agents.Walk(ctx, nil, func(_ sdk.AccAddress, ta types.TransferAgent) (bool, error) {
		gs.TransferAgents = append(gs.TransferAgents, ta)
		return false, nil
	}); err != nil {
		return fmt.Errorf("walk transfer agents: %w", err)
	}
	return nil
}
