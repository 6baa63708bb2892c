package keeper_test

import (
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/inferenced/inferenced/x/inference/types"
)

func TestExecutorHealthQueryRejectsBadAddressAndShowsHealthyDefault(t *testing.T) {
	f := newBreakerFixture(t)
	_, err := f.query.ExecutorHealth(f.ctx, &types.QueryExecutorHealthRequest{Address: "cosmos1bad"})
	require.Equal(t, codes.InvalidArgument, status.Code(err))
	_, err = f.query.ExecutorHealth(f.ctx, nil)
	require.Equal(t, codes.InvalidArgument, status.Code(err))
	require.Equal(t, types.HealthStatus{Address: bech(4)}, f.health(4))
}
