package keeper

import (
	"context"

	errorsmod "cosmossdk.io/errors"

	sdk "github.com/cosmos/cosmos-sdk/types"
	sdkerrors "github.com/cosmos/cosmos-sdk/types/errors"

	"github.com/inferenced/inferenced/x/inference/types"
)

type msgServer struct {
	k Keeper
}

var _ types.MsgServer = msgServer{}

// NewMsgServerImpl returns the Msg service over the keeper.
func NewMsgServerImpl(k Keeper) types.MsgServer { return msgServer{k: k} }

func (s msgServer) address(field, bech string) (sdk.AccAddress, error) {
	bz, err := s.k.addressCodec.StringToBytes(bech)
	if err != nil {
		return nil, errorsmod.Wrapf(sdkerrors.ErrInvalidAddress, "%s %q: %s", field, bech, err)
	}
	return bz, nil
}

func (s msgServer) UpdateParams(ctx context.Context, msg *types.MsgUpdateParams) (*types.MsgUpdateParamsResponse, error) {
	if msg.Authority != s.k.authority {
		return nil, errorsmod.Wrapf(types.ErrInvalidSigner, "expected %s, got %s", s.k.authority, msg.Authority)
	}
	if err := s.k.UpdateParams(ctx, msg.Params); err != nil {
		return nil, err
	}
	return &types.MsgUpdateParamsResponse{}, nil
}

func (s msgServer) RegisterParticipant(ctx context.Context, msg *types.MsgRegisterParticipant) (*types.MsgRegisterParticipantResponse, error) {
	addr, err := s.address("creator", msg.Creator)
	if err != nil {
		return nil, err
	}
	fields := ParticipantFields{InferenceURL: msg.InferenceUrl, Models: msg.Models, Weight: msg.Weight, PocAvailable: msg.PocAvailable}
	if err := s.k.RegisterParticipant(ctx, addr, fields, msg.Bond); err != nil {
		return nil, err
	}
	return &types.MsgRegisterParticipantResponse{}, nil
}

func (s msgServer) UpdateParticipant(ctx context.Context, msg *types.MsgUpdateParticipant) (*types.MsgUpdateParticipantResponse, error) {
	addr, err := s.address("creator", msg.Creator)
	if err != nil {
		return nil, err
	}
	fields := ParticipantFields{InferenceURL: msg.InferenceUrl, Models: msg.Models, Weight: msg.Weight, PocAvailable: msg.PocAvailable}
	if err := s.k.UpdateParticipant(ctx, addr, fields, msg.AddBond); err != nil {
		return nil, err
	}
	return &types.MsgUpdateParticipantResponse{}, nil
}

func (s msgServer) DeregisterParticipant(ctx context.Context, msg *types.MsgDeregisterParticipant) (*types.MsgDeregisterParticipantResponse, error) {
	addr, err := s.address("creator", msg.Creator)
	if err != nil {
		return nil, err
	}
	release, err := s.k.DeregisterParticipant(ctx, addr)
	if err != nil {
		return nil, err
	}
	return &types.MsgDeregisterParticipantResponse{ReleaseEpoch: release}, nil
}

func (s msgServer) StartInference(ctx context.Context, msg *types.MsgStartInference) (*types.MsgStartInferenceResponse, error) {
	agent, err := s.address("creator", msg.Creator)
	if err != nil {
		return nil, err
	}
	executor, err := s.address("executor", msg.Executor)
	if err != nil {
		return nil, err
	}
	expiration, err := s.k.StartInference(ctx, StartRequest{
		TransferAgent: agent, Executor: executor, InferenceID: msg.InferenceId, Model: msg.Model, PromptHash: msg.PromptHash,
	})
	if err != nil {
		return nil, err
	}
	return &types.MsgStartInferenceResponse{ExpirationHeight: expiration}, nil
}

func (s msgServer) FinishInference(ctx context.Context, msg *types.MsgFinishInference) (*types.MsgFinishInferenceResponse, error) {
	signer, err := s.address("creator", msg.Creator)
	if err != nil {
		return nil, err
	}
	agent, err := s.k.transferAgentArg(msg.TransferAgent)
	if err != nil {
		return nil, err
	}
	if err := s.k.FinishInference(ctx, signer, agent, msg.InferenceId, msg.ResponseHash); err != nil {
		return nil, err
	}
	return &types.MsgFinishInferenceResponse{}, nil
}
