package keeper

import (
	"context"

	"github.com/inferenced/inferenced/x/inference/types"
)

func (s msgServer) RegisterTransferAgent(ctx context.Context, msg *types.MsgRegisterTransferAgent) (*types.MsgRegisterTransferAgentResponse, error) {
	addr, err := s.address("creator", msg.Creator)
	if err != nil {
		return nil, err
	}
	if err := s.k.agents.Register(ctx, addr, msg.Bond); err != nil {
		return nil, err
	}
	return &types.MsgRegisterTransferAgentResponse{}, nil
}

func (s msgServer) LeaveTransferAgent(ctx context.Context, msg *types.MsgLeaveTransferAgent) (*types.MsgLeaveTransferAgentResponse, error) {
	addr, err := s.address("creator", msg.Creator)
	if err != nil {
		return nil, err
	}
	release, err := s.k.agents.Leave(ctx, addr)
	if err != nil {
		return nil, err
	}
	return &types.MsgLeaveTransferAgentResponse{ReleaseEpoch: release}, nil
}
