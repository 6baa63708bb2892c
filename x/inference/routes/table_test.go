package routes_test

import (
	"encoding/binary"
	"fmt"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/status"

	sdk "github.com/cosmos/cosmos-sdk/types"

	"github.com/inferenced/inferenced/x/inference/keeper"
	"github.com/inferenced/inferenced/x/inference/routes"
	"github.com/inferenced/inferenced/x/inference/testutil"
	"github.com/inferenced/inferenced/x/inference/types"
)

// selState is a committed state for the differential tests, written
// straight into the collections so that it can hold what the writers never
// produce too (a weight-0 member, a member without a participant record).
type selState struct {
	pocBlocks  uint64
	enforce    bool
	epochStart int64
	members    []types.EpochMember
	statuses   []types.ParticipantStatus // per member; UNSPECIFIED with noRecord set means no record
	noRecord   []bool
	extra      int // participants registered after the boundary (not members)
	health     []types.ExecutorHealth
}

func selAddr(i int) sdk.AccAddress {
	a := make([]byte, 20)
	binary.BigEndian.PutUint32(a[16:], uint32(i+1))
	return a
}

func selBech(t testing.TB, i int) string {
	s, err := ac.BytesToString(selAddr(i))
	require.NoError(t, err)
	return s
}

// load writes s into a fresh keeper, commits it and returns the keeper and
// a context reading the committed state, as a query's does.
func (s selState) load(t testing.TB) (keeper.Keeper, sdk.Context) {
	t.Helper()
	k, tc := testutil.Keeper(t)
	ctx := tc.Ctx
	p := types.DefaultParams()
	p.PocPhaseBlocks = s.pocBlocks
	p.HealthCbEnforce = s.enforce
	p.HealthCbMaxExcludedWeightPct = 100
	require.NoError(t, k.Params.Set(ctx, p))
	require.NoError(t, k.Epoch.Set(ctx, types.Epoch{Index: 1, StartHeight: s.epochStart, Members: uint32(len(s.members))}))
	for i, m := range s.members {
		require.NoError(t, k.EpochMembers.Set(ctx, uint32(i), m))
		require.NoError(t, k.EpochMemberIndex.Set(ctx, selAddr(i), uint32(i)))
		if s.noRecord[i] {
			continue
		}
		require.NoError(t, k.Participants.Set(ctx, selAddr(i), types.Participant{
			Address: m.Address, InferenceUrl: m.InferenceUrl, Models: m.Models, Weight: m.Weight,
			PocAvailable: m.PocAvailable, Status: s.statuses[i],
		}))
	}
	for j := range s.extra {
		i := len(s.members) + j
		require.NoError(t, k.Participants.Set(ctx, selAddr(i), types.Participant{
			Address: selBech(t, i), InferenceUrl: "http://late.example/", Models: []string{"a"}, Weight: 5,
			Status: types.PARTICIPANT_STATUS_ACTIVE,
		}))
	}
	for _, h := range s.health {
		require.NoError(t, k.Breaker().Restore(ctx, h))
	}
	tc.CMS.Commit()
	return k, ctx.WithMultiStore(tc.CMS.CacheMultiStore())
}

func (s selState) stageOf(k keeper.Keeper) referenceStage { return breakerStage(k) }

var selModels = []string{"a", "b", "c", "unserved", ""}

// requireSameAnswers queries every model with seeds at each committed
// height, twice (the second round is served from the route tables), and
// checks each answer against the reference's.
func requireSameAnswers(t *testing.T, s selState, heights []int64, seeds int) {
	t.Helper()
	k, ctx := s.load(t)
	r := routes.New(k)
	q := keeper.NewQueryServerImpl(k, r)
	stage := s.stageOf(k)
	for round := range 2 {
		for _, h := range heights {
			c := ctx.WithBlockHeight(h)
			for _, model := range selModels {
				for seed := range uint64(seeds) {
					want, wantErr := referenceQuery(c, k, stage, h, model, seed)
					got, gotErr := q.GetRandomExecutor(c, &types.QueryGetRandomExecutorRequest{Model: model, Seed: seed})
					what := fmt.Sprintf("round %d, committed height %d, model %q, seed %d", round, h, model, seed)
					if wantErr != nil {
						require.Error(t, gotErr, what)
						require.Equal(t, status.Code(wantErr), status.Code(gotErr), what)
						require.Equal(t, status.Convert(wantErr).Message(), status.Convert(gotErr).Message(), what) // what a gRPC client reads
						continue
					}
					require.NoError(t, gotErr, what)
					require.Equal(t, want, got, what)
				}
			}
		}
		require.Equal(t, min(len(heights), 4), r.Kept(), "every height's table was built and kept (four at most)")
	}
}

// member is an epoch member i serving models at weight w.
func member(t testing.TB, i int, w uint64, poc bool, models ...string) types.EpochMember {
	return types.EpochMember{Address: selBech(t, i), Weight: w, Models: models, InferenceUrl: "http://e.example/", PocAvailable: poc}
}

func excludedUntil(t testing.TB, i int, eligible int64) types.ExecutorHealth {
	return types.ExecutorHealth{Address: selBech(t, i), State: types.HEALTH_STATE_EXCLUDED, ExcludedAt: eligible - 4,
		CooldownBlocks: 4, Exclusions: 1, SinceHeight: eligible - 4}
}

func probe(t testing.TB, i int, taken bool) types.ExecutorHealth {
	h := types.ExecutorHealth{Address: selBech(t, i), State: types.HEALTH_STATE_PROBE, ExcludedAt: 1,
		CooldownBlocks: 4, Exclusions: 1, SinceHeight: 5}
	if taken {
		h.ProbeInferenceId = fmt.Sprintf("probe-%d", i)
	}
	return h
}

func active(n int) []types.ParticipantStatus {
	out := make([]types.ParticipantStatus, n)
	for i := range out {
		out[i] = types.PARTICIPANT_STATUS_ACTIVE
	}
	return out
}

// TestRouteTableMatchesReferenceCases: named states at the boundaries the
// answer depends on; each is queried at committed heights 8..12 (so the
// evaluated height crosses the PoC phase's end at 10 and the cooldowns).
func TestRouteTableMatchesReferenceCases(t *testing.T) {
	four := func(t testing.TB) []types.EpochMember {
		return []types.EpochMember{member(t, 0, 10, true, "a"), member(t, 1, 20, false, "a", "b"),
			member(t, 2, 30, true, "a", "c"), member(t, 3, 40, true, "b")}
	}
	cases := []struct {
		name   string
		change func(t testing.TB, s *selState)
	}{
		{"healthy group, breaker stage", func(testing.TB, *selState) {}},
		{"shadow mode, nobody held", func(_ testing.TB, s *selState) { s.enforce = false }},
		{"inactive and invalid members refused", func(_ testing.TB, s *selState) {
			s.statuses[0], s.statuses[3] = types.PARTICIPANT_STATUS_INACTIVE, types.PARTICIPANT_STATUS_INVALID
		}},
		{"weight-0 member refused", func(_ testing.TB, s *selState) { s.members[2].Weight = 0 }},
		{"member without a participant record is a fault", func(_ testing.TB, s *selState) { s.noRecord[1] = true }},
		{"excluded member out until its cooldown, then a probe", func(t testing.TB, s *selState) {
			s.health = []types.ExecutorHealth{excludedUntil(t, 2, 11)}
		}},
		{"probe slot free offered, taken out", func(t testing.TB, s *selState) {
			s.health = []types.ExecutorHealth{probe(t, 0, false), probe(t, 2, true)}
		}},
		{"everyone excluded: the fallback", func(t testing.TB, s *selState) {
			for i := range s.members {
				s.health = append(s.health, excludedUntil(t, i, 30))
			}
		}},
		{"shadow mode ignores the breaker", func(t testing.TB, s *selState) {
			s.enforce = false
			s.health = []types.ExecutorHealth{excludedUntil(t, 0, 30), probe(t, 2, true)}
		}},
		{"participants registered after the boundary are not members", func(_ testing.TB, s *selState) { s.extra = 3 }},
		{"empty group", func(_ testing.TB, s *selState) { s.members, s.statuses, s.noRecord = nil, nil, nil }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := selState{pocBlocks: 5, enforce: true, epochStart: 5, members: four(t), statuses: active(4),
				noRecord: make([]bool, 4)}
			tc.change(t, &s)
			requireSameAnswers(t, s, []int64{8, 9, 10, 11, 12}, 12)
		})
	}
}

// randomSelState draws a state: up to 40 members over three models, every
// participant status, weights 0..1000, PoC availability, breaker records
// (EXCLUDED around the evaluated height, PROBE free or taken), shadow mode,
// registrations after the boundary, and now and then a member without a
// record.
func randomSelState(t testing.TB, rng *rand.Rand) selState {
	n := rng.Intn(41)
	s := selState{pocBlocks: uint64(rng.Intn(8)), enforce: rng.Intn(5) > 0, epochStart: 1 + rng.Int63n(10),
		statuses: make([]types.ParticipantStatus, n), noRecord: make([]bool, n), extra: rng.Intn(3)}
	if rng.Intn(4) == 0 { // as often as the breaker's stage was left out before shadow mode took its place
		s.enforce = false
	}
	statuses := []types.ParticipantStatus{types.PARTICIPANT_STATUS_INACTIVE, types.PARTICIPANT_STATUS_INVALID,
		types.PARTICIPANT_STATUS_UNSPECIFIED}
	for i := range n {
		var models []string
		for _, m := range []string{"a", "b", "c"} {
			if rng.Intn(2) == 0 {
				models = append(models, m)
			}
		}
		w := uint64(rng.Intn(1001))
		if rng.Intn(10) == 0 {
			w = 0
		}
		s.members = append(s.members, member(t, i, w, rng.Intn(3) > 0, models...))
		s.statuses[i] = types.PARTICIPANT_STATUS_ACTIVE
		if rng.Intn(6) == 0 {
			s.statuses[i] = statuses[rng.Intn(len(statuses))]
		}
		s.noRecord[i] = rng.Intn(60) == 0
		switch rng.Intn(8) {
		case 0, 1:
			s.health = append(s.health, excludedUntil(t, i, s.epochStart+rng.Int63n(16)))
		case 2:
			s.health = append(s.health, probe(t, i, rng.Intn(2) == 0))
		}
	}
	return s
}

// TestRouteTableMatchesReferenceRandomized: 150 random states (seeded), each
// queried at four committed heights across its PoC phase and cooldowns.
func TestRouteTableMatchesReferenceRandomized(t *testing.T) {
	rng := rand.New(rand.NewSource(12))
	cases := 150
	if testing.Short() {
		cases = 30
	}
	for c := range cases {
		s := randomSelState(t, rng)
		h := s.epochStart + rng.Int63n(10)
		t.Run(fmt.Sprintf("state-%d", c), func(t *testing.T) {
			requireSameAnswers(t, s, []int64{h, h + 1, h + 3, h + 7}, 6)
		})
	}
}
