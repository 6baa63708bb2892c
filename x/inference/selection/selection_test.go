package selection

import (
	"errors"
	"fmt"
	"testing"

	"github.com/inferenced/inferenced/x/inference/testutil/testkit"

	"github.com/stretchr/testify/require"

	"github.com/inferenced/inferenced/x/inference/types"
)

// weighted is the admitted pool of members 1..4 at weights 1..4.
func weighted() []types.Candidate {
	var pool []types.Candidate
	for i := 1; i <= 4; i++ {
		m := types.EpochMember{Address: name(i), Weight: uint64(i), Models: []string{"m"}, PocAvailable: true}
		pool = append(pool, types.Candidate{Member: m, Weight: m.Weight})
	}
	return pool
}

func name(i int) string { return fmt.Sprintf("member-%d", i) }

// counts draws seeds [0, n) from sel and counts the winners.
func counts(t *testing.T, sel Selection, n uint64) map[string]int {
	t.Helper()
	out := map[string]int{}
	for seed := range n {
		d, err := DrawFrom(sel, seed)
		require.NoError(t, err)
		out[d.Picked.Member.Address]++
	}
	return out
}

func TestHealthStageRemovedCandidatesAreNeverDrawn(t *testing.T) {
	calls := 0
	sel, err := Health("m", weighted(), func(pool []types.Candidate) ([]types.Candidate, error) {
		calls++
		var out []types.Candidate
		for _, c := range pool {
			if c.Member.Address != name(3) && c.Member.Address != name(4) {
				out = append(out, c)
			}
		}
		return out, nil
	})
	require.NoError(t, err)
	require.Equal(t, 1, calls, "the health stage runs once per selection")
	const n = 3000
	got := counts(t, sel, n)
	require.Zero(t, got[name(3)])
	require.Zero(t, got[name(4)])
	testkit.RequireNear(t, got[name(1)], n, 1.0/3, "member 1 among 1 and 2")
	d, err := DrawFrom(sel, 0)
	require.NoError(t, err)
	require.Equal(t, 2, d.Candidates)
	require.Equal(t, uint64(3), d.TotalWeight)
	require.False(t, d.Fallback)
}

func TestHealthStageRemovingAllFallsBackToPoolBeforeHealthStage(t *testing.T) {
	sel, err := Health("m", weighted(), func([]types.Candidate) ([]types.Candidate, error) { return nil, nil })
	require.NoError(t, err)
	require.True(t, sel.Fallback)
	require.Len(t, sel.Pool, 4, "exactly the admitted pool, nobody else")
	got := counts(t, sel, 2000)
	require.Len(t, got, 4)
	d, err := DrawFrom(sel, 9)
	require.NoError(t, err)
	require.Equal(t, 4, d.Candidates)
	require.Equal(t, uint64(10), d.TotalWeight)
	require.True(t, d.Fallback)
}

func TestHealthStageLoweredWeightChangesDistribution(t *testing.T) {
	const n = 4000
	before, err := Health("m", weighted(), nil)
	require.NoError(t, err)
	testkit.RequireNear(t, counts(t, before, n)[name(4)], n, 0.4, "member 4 at full weight")

	after, err := Health("m", weighted(), func(pool []types.Candidate) ([]types.Candidate, error) {
		for i := range pool {
			if pool[i].Member.Address == name(4) {
				pool[i].Weight = 0 // a probe offered at no weight, say
			}
			if pool[i].Member.Address == name(1) {
				pool[i].Weight = 4
			}
		}
		return pool, nil
	})
	require.NoError(t, err)
	got := counts(t, after, n)
	require.Zero(t, got[name(4)])
	testkit.RequireNear(t, got[name(1)], n, 4.0/9, "member 1 raised to weight 4")
	d, err := DrawFrom(after, 1)
	require.NoError(t, err)
	require.Equal(t, uint64(9), d.TotalWeight)
}

// A health stage that offers every candidate at weight 0 has, in effect,
// filtered them all out: the fallback must return the pre-health pool
// instead of failing the query.
func TestHealthStageZeroingEveryWeightFallsBack(t *testing.T) {
	sel, err := Health("m", weighted(), func(pool []types.Candidate) ([]types.Candidate, error) {
		for i := range pool {
			pool[i].Weight = 0
		}
		return pool, nil
	})
	require.NoError(t, err)
	d, err := DrawFrom(sel, 3)
	require.NoError(t, err)
	require.Equal(t, 4, d.Candidates)
	require.Equal(t, uint64(10), d.TotalWeight, "the fallback pool keeps the epoch weights")
}

// The stage never sees the caller's pool: what it changes stays its own.
func TestHealthStageGetsACopyOfThePool(t *testing.T) {
	pool := weighted()
	_, err := Health("m", pool, func(p []types.Candidate) ([]types.Candidate, error) {
		p[0].Weight = 99
		return p, nil
	})
	require.NoError(t, err)
	require.Equal(t, uint64(1), pool[0].Weight)
}

func TestHealthStageFaultAndEmptyPool(t *testing.T) {
	boom := errors.New("store fault")
	_, err := Health("m", weighted(), func([]types.Candidate) ([]types.Candidate, error) { return nil, boom })
	require.ErrorIs(t, err, boom)
	_, err = Health("m", nil, nil)
	require.ErrorIs(t, err, types.ErrNoExecutor)
}

// The admission rule as a table: each stage's refusal, and a fault that is
// not a refusal.
func TestAdmit(t *testing.T) {
	member := types.EpochMember{Address: "e", Weight: 5, Models: []string{"a", "m"}, PocAvailable: false}
	active := func(types.EpochMember) (types.ParticipantStatus, error) { return types.PARTICIPANT_STATUS_ACTIVE, nil }
	fault := errors.New("no participant record")
	for _, tc := range []struct {
		name    string
		rc      Context
		m       func(types.EpochMember) types.EpochMember
		model   string
		status  StatusReader
		refused string // the refusal's text, or "" when admitted
		wantErr error  // a fault
	}{
		{name: "admitted", m: same, model: "m", status: active},
		{name: "model not served", m: same, model: "x", status: active, refused: `does not serve model "x"`},
		{name: "inactive", m: same, model: "m", status: func(types.EpochMember) (types.ParticipantStatus, error) {
			return types.PARTICIPANT_STATUS_INACTIVE, nil
		}, refused: "PARTICIPANT_STATUS_INACTIVE"},
		{name: "weight 0", m: func(m types.EpochMember) types.EpochMember { m.Weight = 0; return m }, model: "m", status: active, refused: "weight 0"},
		{name: "PoC phase", rc: Context{InPocPhase: true}, m: same, model: "m", status: active, refused: "PoC phase"},
		{name: "status fault", m: same, model: "m", status: func(types.EpochMember) (types.ParticipantStatus, error) {
			return 0, fault
		}, wantErr: fault},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := Admit(tc.rc, tc.m(member), tc.model, tc.status)
			switch {
			case tc.wantErr != nil:
				require.ErrorIs(t, err, tc.wantErr)
				require.False(t, IsRefusal(err), "a fault is not a refusal")
			case tc.refused != "":
				require.True(t, IsRefusal(err), "%v", err)
				require.ErrorContains(t, err, tc.refused)
			default:
				require.NoError(t, err)
			}
		})
	}
}

func same(m types.EpochMember) types.EpochMember { return m }

// Pool keeps admitted members in order, skips refusals and stops at a
// fault.
func TestPool(t *testing.T) {
	members := []types.EpochMember{
		{Address: "a", Weight: 1, Models: []string{"m"}},
		{Address: "b", Weight: 0, Models: []string{"m"}},
		{Address: "c", Weight: 3, Models: []string{"m"}},
	}
	each := func(admit func(types.EpochMember) error) error {
		for _, m := range members {
			if err := admit(m); err != nil {
				return err
			}
		}
		return nil
	}
	active := func(types.EpochMember) (types.ParticipantStatus, error) { return types.PARTICIPANT_STATUS_ACTIVE, nil }
	pool, err := Pool(Context{}, "m", active, each)
	require.NoError(t, err)
	require.Equal(t, []types.Candidate{{Member: members[0], Weight: 1}, {Member: members[2], Weight: 3}}, pool)
	fault := errors.New("fault")
	_, err = Pool(Context{}, "m", func(types.EpochMember) (types.ParticipantStatus, error) { return 0, fault }, each)
	require.ErrorIs(t, err, fault)
}

// The table draws what DrawFrom draws, for every seed.
func TestTableDrawsAsDrawFrom(t *testing.T) {
	sel, err := Health("m", weighted(), nil)
	require.NoError(t, err)
	table := NewTable(sel)
	for seed := range uint64(500) {
		want, err := DrawFrom(sel, seed)
		require.NoError(t, err)
		got, err := table.Draw(seed)
		require.NoError(t, err)
		require.Equal(t, want, got, "seed %d", seed)
	}
}
