package breakerstore_test

import (
	"testing"

	"github.com/cosmos/gogoproto/proto"
	"github.com/stretchr/testify/require"

	"github.com/inferenced/inferenced/x/inference/types"
)

func TestExclusionCapKeepsMostOfAModelServing(t *testing.T) {
	p := breakerParams()
	p.HealthCbInitialCooldownBlocks, p.HealthCbMaxCooldownBlocks = 100, 100
	f := newBreakerFixture(t, p) // 4 x weight 10, cap 50%
	f.feed(1, "mmm")
	f.feed(2, "mmm")
	f.feed(3, "mmm")
	h := f.health(3)
	require.Equal(t, types.HEALTH_STATE_HEALTHY, h.State, "a third exclusion would take 30 of 40")
	require.Equal(t, uint32(1), h.CapRefusals)
	require.Equal(t, types.HEALTH_REASON_NONE, h.Reason)
	capped := typedEvents[*types.EventExclusionCapped](t, f.ctx)
	require.Len(t, capped, 1)
	require.Equal(t, types.EventExclusionCapped{
		Executor: bech(3), Model: "m", ExcludedWeight: 20, ExecutorWeight: 10, ModelWeight: 40, CapPct: 50, Height: f.height,
	}, *capped[0])
	require.Empty(t, typedEvents[*types.EventExecutorHealthChanged](t, f.ctx))
	var order []string
	for _, ev := range f.ctx.EventManager().ABCIEvents() {
		switch ev.Type {
		case proto.MessageName(&types.EventTrafficMissCounted{}), proto.MessageName(&types.EventExclusionCapped{}):
			order = append(order, ev.Type)
		}
	}
	require.Equal(t, []string{proto.MessageName(&types.EventTrafficMissCounted{}), proto.MessageName(&types.EventExclusionCapped{})}, order,
		"the refusal follows the miss that tripped the rule")
	got := f.offered(400)
	require.Zero(t, got[bech(1)])
	require.Zero(t, got[bech(2)])
	require.Positive(t, got[bech(3)])
}

func TestExclusionCapFreedByARestoredExecutor(t *testing.T) {
	f := newBreakerFixture(t, breakerParams())
	f.feed(1, "mmm")
	f.feed(2, "mmm")
	f.runUntil(bInitial+1, func() bool { return f.health(1).State == types.HEALTH_STATE_PROBE })
	f.feed(3, "mmm")
	require.Equal(t, types.HEALTH_STATE_HEALTHY, f.health(3).State, "a PROBE executor still counts against the cap")
	require.Equal(t, uint32(1), f.health(3).CapRefusals)
	f.feed(1, "o") // probe of 1 succeeds: capacity for one more
	require.Equal(t, types.HEALTH_STATE_HEALTHY, f.health(1).State)
	f.feed(3, "m")
	require.Equal(t, types.HEALTH_STATE_EXCLUDED, f.health(3).State)
}

// Exclusions decided in the same block count against the cap one after the
// other, in address order.
func TestExclusionCapAppliesWithinOneBlock(t *testing.T) {
	f := newBreakerFixture(t, breakerParams()) // 4 x weight 10, cap 50%
	for range 3 {
		for i := byte(1); i <= 3; i++ {
			f.attest(i, true)
		}
		f.next()
	}
	require.Equal(t, types.HEALTH_STATE_EXCLUDED, f.health(1).State)
	require.Equal(t, types.HEALTH_STATE_EXCLUDED, f.health(2).State)
	require.Equal(t, types.HEALTH_STATE_HEALTHY, f.health(3).State)
	require.Len(t, typedEvents[*types.EventExclusionCapped](t, f.ctx), 1)
}

// A PROBE executor re-excluded in a block where the cap is already loaded
// is already counted as out: counting it again would refuse exclusions the
// cap allows.
func TestReExclusionInTheSameBlockIsNotCountedTwiceByTheCap(t *testing.T) {
	var more []member
	for i := byte(5); i <= 10; i++ {
		more = append(more, member{i, 10, []string{"m"}})
	}
	f := newBreakerFixture(t, breakerParams(), more...) // 10 x weight 10, cap 50
	for range 3 {
		f.attest(2, true)
		f.next()
	}
	f.runUntil(bInitial+1, func() bool { return f.health(2).State == types.HEALTH_STATE_PROBE })
	for range 2 {
		for _, i := range []byte{1, 3, 4, 5} {
			f.attest(i, true)
		}
		f.next()
	}
	for _, i := range []byte{1, 2, 3, 4, 5} { // 1 trips first and loads the cap; 2 is re-excluded
		f.attest(i, true)
	}
	f.next()
	for _, i := range []byte{1, 2, 3, 4, 5} {
		require.Equal(t, types.HEALTH_STATE_EXCLUDED, f.health(i).State, "executor %d: 50 of 100 is within the cap", i)
	}
	require.Empty(t, typedEvents[*types.EventExclusionCapped](t, f.ctx))
}
