package replaylog

import (
	"context"
	"fmt"

	sdk "github.com/cosmos/cosmos-sdk/types"

	"github.com/inferenced/inferenced/x/inference/types"
)

// MsgServer records every message inner handles: its gas, outcome and
// response. With a nil Log it is inner itself.
func MsgServer(l *Log, inner types.MsgServer) types.MsgServer {
	if l == nil {
		return inner
	}
	return msgServer{l: l, inner: inner}
}

type msgServer struct {
	l     *Log
	inner types.MsgServer
}

func record[Req fmt.Stringer, Resp fmt.Stringer](l *Log, ctx context.Context, name string, req Req, call func(context.Context, Req) (Resp, error)) (Resp, error) {
	var resp Resp
	err := l.Tx(sdk.UnwrapSDKContext(ctx), name+" "+req.String(), func() error {
		var err error
		resp, err = call(ctx, req)
		return err
	})
	if err == nil {
		l.line("  resp %s", resp.String())
	}
	return resp, err
}

func (s msgServer) UpdateParams(ctx context.Context, m *types.MsgUpdateParams) (*types.MsgUpdateParamsResponse, error) {
	return record(s.l, ctx, "UpdateParams", m, s.inner.UpdateParams)
}

func (s msgServer) RegisterParticipant(ctx context.Context, m *types.MsgRegisterParticipant) (*types.MsgRegisterParticipantResponse, error) {
	return record(s.l, ctx, "RegisterParticipant", m, s.inner.RegisterParticipant)
}

func (s msgServer) UpdateParticipant(ctx context.Context, m *types.MsgUpdateParticipant) (*types.MsgUpdateParticipantResponse, error) {
	return record(s.l, ctx, "UpdateParticipant", m, s.inner.UpdateParticipant)
}

func (s msgServer) DeregisterParticipant(ctx context.Context, m *types.MsgDeregisterParticipant) (*types.MsgDeregisterParticipantResponse, error) {
	return record(s.l, ctx, "DeregisterParticipant", m, s.inner.DeregisterParticipant)
}

func (s msgServer) StartInference(ctx context.Context, m *types.MsgStartInference) (*types.MsgStartInferenceResponse, error) {
	return record(s.l, ctx, "StartInference", m, s.inner.StartInference)
}

func (s msgServer) FinishInference(ctx context.Context, m *types.MsgFinishInference) (*types.MsgFinishInferenceResponse, error) {
	return record(s.l, ctx, "FinishInference", m, s.inner.FinishInference)
}

func (s msgServer) RegisterTransferAgent(ctx context.Context, m *types.MsgRegisterTransferAgent) (*types.MsgRegisterTransferAgentResponse, error) {
	return record(s.l, ctx, "RegisterTransferAgent", m, s.inner.RegisterTransferAgent)
}

func (s msgServer) LeaveTransferAgent(ctx context.Context, m *types.MsgLeaveTransferAgent) (*types.MsgLeaveTransferAgentResponse, error) {
	return record(s.l, ctx, "LeaveTransferAgent", m, s.inner.LeaveTransferAgent)
}
