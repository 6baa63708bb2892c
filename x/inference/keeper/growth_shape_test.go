package keeper_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/inferenced/inferenced/x/inference/testutil"
)

// TestGrowthLoadStaysSteady proves the growth benchmark's load is the
// steady state it claims: over two epochs every start is accepted, every
// finish lands, the keeper expires exactly the starts left unfinished,
// and the misses (1 in 21) leave every executor routable at the end of
// each epoch, so no epoch of the benchmark runs on a shrinking group.
func TestGrowthLoadStaysSteady(t *testing.T) {
	r := newGrowthRun(t, growthDefaultRetention)
	for h := int64(1); h <= 2*growthEpochLength; h++ {
		r.block(h, nil) // every start and finish is required to succeed
		if h%growthEpochLength != 0 {
			continue
		}
		ctx := r.tc.Ctx.WithBlockHeight(h)
		for i, e := range r.execs {
			require.NoError(t, r.k.CheckRoutable(ctx, e, testutil.Model), "epoch end %d: executor %d", h, i)
		}
	}
	due := 0
	for _, at := range r.expiring {
		if at <= 2*growthEpochLength {
			due++
		}
	}
	require.Positive(t, due)
	require.Equal(t, due, r.expired, "expired inferences")
	require.Equal(t, uint64(2*growthEpochLength*growthPerBlock), r.next, "starts")
}
