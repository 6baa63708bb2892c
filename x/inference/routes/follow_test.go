package routes_test

import (
	"fmt"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/status"

	"github.com/inferenced/inferenced/x/inference/keeper"
	"github.com/inferenced/inferenced/x/inference/routes"
	"github.com/inferenced/inferenced/x/inference/types"
)

// TestRouteTableFollowsCommittedBlocks runs 120 blocks of random traffic
// (finishes, misses, attested misses, an executor turned INACTIVE and back)
// through the real breaker, so exclusions, cooldown promotions, probe
// claims and restorations happen, over epochs of 40 blocks that a late
// registration joins (shifting the group), and after each block queries the
// state it committed through the route tables (never forgotten here),
// checking every answer against the reference: a table kept for one height
// never answers for the next, and what a table reuses from the previous one
// is only what did not change.
func TestRouteTableFollowsCommittedBlocks(t *testing.T) {
	p := breakerParams()
	p.EpochLength = 40
	var ps []types.Participant
	for i := byte(1); i <= 5; i++ {
		ps = append(ps, participant(t, i, 10, p, "m"))
	}
	c := newChain(t, p, append(ps, participant(t, 6, 10, p, "m", "x"))...)
	q := keeper.NewQueryServerImpl(c.k, routes.New(c.k))
	rng := rand.New(rand.NewSource(7))
	changed, last := 0, ""
	for range 120 {
		for e := byte(1); e <= 6; e++ {
			if rng.Intn(2) == 0 {
				continue
			}
			id, err := c.start(e, "m")
			if err != nil {
				require.ErrorIs(t, err, types.ErrExecutorNotRoutable)
				continue
			}
			if e > 2 || rng.Intn(3) > 0 { // 1 and 2 miss a third of their requests
				require.NoError(t, c.finish(e, id))
			}
		}
		if rng.Intn(4) == 0 {
			c.attest(byte(1 + rng.Intn(6)))
		}
		if c.height == 30 {
			require.NoError(t, c.register(0, 25, "m", "x")) // sorts first: every member moves up one
		}
		if rng.Intn(20) == 0 {
			e := byte(3 + rng.Intn(4))
			s := types.PARTICIPANT_STATUS_INACTIVE
			if c.status(e) == s {
				s = types.PARTICIPANT_STATUS_ACTIVE
			}
			c.setStatus(e, s)
		}
		c.end()
		sig := ""
		for _, model := range []string{"m", "x"} {
			for seed := range uint64(8) {
				want, wantErr := referenceQuery(c.ctx, c.k, breakerStage(c.k), c.height, model, seed)
				got, gotErr := q.GetRandomExecutor(c.ctx, &types.QueryGetRandomExecutorRequest{Model: model, Seed: seed})
				what := fmt.Sprintf("height %d, model %q, seed %d", c.height, model, seed)
				// What a gRPC client reads: the code and the message.
				require.Equal(t, status.Code(wantErr), status.Code(gotErr), what)
				require.Equal(t, status.Convert(wantErr).Message(), status.Convert(gotErr).Message(), what)
				require.Equal(t, want, got, what)
				if seed == 0 {
					sig += fmt.Sprint(got.GetCandidates(), got.GetTotalWeight(), got.GetHealthFallback(), gotErr, ";")
				}
			}
		}
		if sig != last {
			changed++
		}
		last = sig
		c.begin(c.height + 1)
	}
	group, err := c.k.EpochGroup(c.ctx)
	require.NoError(t, err)
	require.Len(t, group.Members, 7, "the late registration joined at a boundary")
	t.Logf("the pool changed at %d of 120 heights", changed)
	require.Greater(t, changed, 20, "the breaker changed the pool between blocks often enough to test the tables")
}
