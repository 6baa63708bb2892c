package types_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/inferenced/inferenced/x/inference/types"
)

type callLog struct {
	name  string
	calls *[]string
	err   error
}

func (c callLog) AfterInferenceFinished(context.Context, types.Inference) error {
	*c.calls = append(*c.calls, c.name+":finished")
	return c.err
}

func (c callLog) AfterInferenceExpired(context.Context, types.Inference) error {
	*c.calls = append(*c.calls, c.name+":expired")
	return c.err
}

func (c callLog) AfterEpochStarted(context.Context, types.Epoch) error {
	*c.calls = append(*c.calls, c.name+":epoch")
	return c.err
}

func TestMultiInferenceHooksCallInOrderAndStopAtFirstError(t *testing.T) {
	var calls []string
	boom := errors.New("boom")
	ok := types.MultiInferenceHooks{callLog{"a", &calls, nil}, callLog{"b", &calls, nil}}
	failing := types.MultiInferenceHooks{callLog{"a", &calls, boom}, callLog{"b", &calls, nil}}
	ctx := context.Background()

	require.NoError(t, ok.AfterInferenceFinished(ctx, types.Inference{}))
	require.NoError(t, ok.AfterInferenceExpired(ctx, types.Inference{}))
	require.NoError(t, ok.AfterEpochStarted(ctx, types.Epoch{}))
	require.Equal(t, []string{"a:finished", "b:finished", "a:expired", "b:expired", "a:epoch", "b:epoch"}, calls)

	calls = nil
	require.ErrorIs(t, failing.AfterInferenceFinished(ctx, types.Inference{}), boom)
	require.ErrorIs(t, failing.AfterInferenceExpired(ctx, types.Inference{}), boom)
	require.ErrorIs(t, failing.AfterEpochStarted(ctx, types.Epoch{}), boom)
	require.Equal(t, []string{"a:finished", "a:expired", "a:epoch"}, calls)
}
