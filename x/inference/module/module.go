// Package module wires x/inference into the module manager: codecs,
// services, genesis and the begin/end block hooks.
package module

import (
	"context"
	"encoding/json"
	"fmt"

	"cosmossdk.io/core/address"
	"cosmossdk.io/core/appmodule"
	gwruntime "github.com/grpc-ecosystem/grpc-gateway/runtime"

	"github.com/cosmos/cosmos-sdk/client"
	"github.com/cosmos/cosmos-sdk/codec"
	codectypes "github.com/cosmos/cosmos-sdk/codec/types"
	sdk "github.com/cosmos/cosmos-sdk/types"
	"github.com/cosmos/cosmos-sdk/types/module"

	"github.com/inferenced/inferenced/x/inference/keeper"
	v2 "github.com/inferenced/inferenced/x/inference/migrations/v2"
	v3 "github.com/inferenced/inferenced/x/inference/migrations/v3"
	v4 "github.com/inferenced/inferenced/x/inference/migrations/v4"
	v5 "github.com/inferenced/inferenced/x/inference/migrations/v5"
	v6 "github.com/inferenced/inferenced/x/inference/migrations/v6"
	v7 "github.com/inferenced/inferenced/x/inference/migrations/v7"
	"github.com/inferenced/inferenced/x/inference/types"
)

// ConsensusVersion is bumped on every state-breaking migration.
const ConsensusVersion = 7

var (
	_ module.AppModuleBasic      = AppModule{}
	_ module.HasGenesis          = AppModule{}
	_ module.HasServices         = AppModule{}
	_ module.HasConsensusVersion = AppModule{}
	_ appmodule.AppModule        = AppModule{}
	_ appmodule.HasBeginBlocker  = AppModule{}
	_ appmodule.HasEndBlocker    = AppModule{}
)

// AppModule is the x/inference module.
type AppModule struct {
	cdc          codec.Codec
	keeper       keeper.Keeper
	router       keeper.Router
	addressCodec address.Codec
}

// NewAppModule builds the module around its keeper; router answers
// GetRandomExecutor (x/inference/routes).
func NewAppModule(cdc codec.Codec, k keeper.Keeper, router keeper.Router) AppModule {
	return AppModule{cdc: cdc, keeper: k, router: router, addressCodec: k.AddressCodec()}
}

func (AppModule) IsOnePerModuleType() {}
func (AppModule) IsAppModule()        {}

// Name is the module name.
func (AppModule) Name() string { return types.ModuleName }

// ConsensusVersion is the state version.
func (AppModule) ConsensusVersion() uint64 { return ConsensusVersion }

func (AppModule) RegisterLegacyAminoCodec(cdc *codec.LegacyAmino) {
	types.RegisterLegacyAminoCodec(cdc)
}

func (AppModule) RegisterInterfaces(registry codectypes.InterfaceRegistry) {
	types.RegisterInterfaces(registry)
}

func (AppModule) RegisterGRPCGatewayRoutes(clientCtx client.Context, mux *gwruntime.ServeMux) {
	if err := types.RegisterQueryHandlerClient(context.Background(), mux, types.NewQueryClient(clientCtx)); err != nil {
		panic(fmt.Sprintf("register x/inference gateway routes: %v", err))
	}
}

func (am AppModule) RegisterServices(cfg module.Configurator) {
	types.RegisterMsgServer(cfg.MsgServer(), keeper.NewMsgServerImpl(am.keeper))
	types.RegisterQueryServer(cfg.QueryServer(), keeper.NewQueryServerImpl(am.keeper, am.router))
	for _, m := range []struct {
		from    uint64
		migrate func(sdk.Context, keeper.Keeper) error
	}{{1, v2.Migrate}, {2, v3.Migrate}, {3, v4.Migrate}, {4, v5.Migrate}, {5, v6.Migrate}, {6, v7.Migrate}} {
		if err := cfg.RegisterMigration(types.ModuleName, m.from, func(ctx sdk.Context) error { return m.migrate(ctx, am.keeper) }); err != nil {
			panic(fmt.Sprintf("register x/inference migration %d -> %d: %v", m.from, m.from+1, err)) // wiring error, at start-up only
		}
	}
}

func (am AppModule) DefaultGenesis(cdc codec.JSONCodec) json.RawMessage {
	return cdc.MustMarshalJSON(types.DefaultGenesis())
}

func (am AppModule) ValidateGenesis(cdc codec.JSONCodec, _ client.TxEncodingConfig, bz json.RawMessage) error {
	var gs types.GenesisState
	if err := cdc.UnmarshalJSON(bz, &gs); err != nil {
		return fmt.Errorf("decode %s genesis: %w", types.ModuleName, err)
	}
	return gs.Validate(am.addressCodec)
}

// InitGenesis loads the genesis. The module manager's interface has no error
// return: a genesis that ValidateGenesis accepted and that still fails here
// cannot start a chain, so it panics with the reason.
func (am AppModule) InitGenesis(ctx sdk.Context, cdc codec.JSONCodec, bz json.RawMessage) {
	var gs types.GenesisState
	cdc.MustUnmarshalJSON(bz, &gs)
	if err := am.keeper.InitGenesis(ctx, gs); err != nil {
		panic(fmt.Sprintf("%s InitGenesis: %v", types.ModuleName, err))
	}
}

// ExportGenesis writes the module state; export runs offline on a stopped node.
func (am AppModule) ExportGenesis(ctx sdk.Context, cdc codec.JSONCodec) json.RawMessage {
	gs, err := am.keeper.ExportGenesis(ctx)
	if err != nil {
		panic(fmt.Sprintf("%s ExportGenesis: %v", types.ModuleName, err))
	}
	return cdc.MustMarshalJSON(gs)
}

// BeginBlock runs the epoch boundary hook.
func (am AppModule) BeginBlock(ctx context.Context) error { return am.keeper.BeginBlock(ctx) }

// EndBlock expires the inferences due at this height.
func (am AppModule) EndBlock(ctx context.Context) error { return am.keeper.EndBlock(ctx) }
