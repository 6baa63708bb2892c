package types

import (
	"github.com/cosmos/cosmos-sdk/codec"
	"github.com/cosmos/cosmos-sdk/codec/legacy"
	codectypes "github.com/cosmos/cosmos-sdk/codec/types"
	sdk "github.com/cosmos/cosmos-sdk/types"
	"github.com/cosmos/cosmos-sdk/types/msgservice"
)

// RegisterLegacyAminoCodec registers the messages for amino JSON signing
// (ledger). Names match the amino.name options in tx.proto.
func RegisterLegacyAminoCodec(cdc *codec.LegacyAmino) {
	legacy.RegisterAminoMsg(cdc, &MsgUpdateParams{}, "inference/MsgUpdateParams")
	legacy.RegisterAminoMsg(cdc, &MsgRegisterParticipant{}, "inference/MsgRegisterParticipant")
	legacy.RegisterAminoMsg(cdc, &MsgUpdateParticipant{}, "inference/MsgUpdateParticipant")
	legacy.RegisterAminoMsg(cdc, &MsgStartInference{}, "inference/MsgStartInference")
	legacy.RegisterAminoMsg(cdc, &MsgFinishInference{}, "inference/MsgFinishInference")
	legacy.RegisterAminoMsg(cdc, &MsgRegisterTransferAgent{}, "inference/MsgRegisterTransferAgent")
	legacy.RegisterAminoMsg(cdc, &MsgLeaveTransferAgent{}, "inference/MsgLeaveTransferAgent")
	legacy.RegisterAminoMsg(cdc, &MsgDeregisterParticipant{}, "inference/MsgDeregisterParticipant")
	cdc.RegisterConcrete(&Params{}, "inference/Params", nil)
}

// RegisterInterfaces registers the messages with the interface registry.
func RegisterInterfaces(registry codectypes.InterfaceRegistry) {
	registry.RegisterImplementations((*sdk.Msg)(nil),
		&MsgUpdateParams{},
		&MsgRegisterParticipant{},
		&MsgUpdateParticipant{},
		&MsgStartInference{},
		&MsgFinishInference{},
		&MsgRegisterTransferAgent{},
		&MsgLeaveTransferAgent{},
		&MsgDeregisterParticipant{},
	)
	msgservice.RegisterMsgServiceDesc(registry, &_Msg_serviceDesc)
}
