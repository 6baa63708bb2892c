package keeper_test

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestHealthyTrafficWritesNoBreakerState(t *testing.T) {
	f := newBreakerFixture(t)
	for range 5 {
		for i := byte(1); i <= 4; i++ {
			id := f.newID()
			f.mustStart(id, i, "m")
			require.NoError(t, f.finish(i, id))
		}
		f.next()
	}
	c := f.census()
	require.Empty(t, c.Records)
	require.Empty(t, c.Pending)
	require.Zero(t, c.Sequence, "no sample was queued")
}

func TestRecordOfAnExecutorWithoutRecentMissesIsDropped(t *testing.T) {
	f := newBreakerFixture(t)
	f.feed(1, "m")
	_, has := f.census().Record(bech(1))
	require.True(t, has)
	for range 64 {
		id := f.newID()
		f.mustStart(id, 1, "m")
		require.NoError(t, f.finish(1, id))
	}
	f.next()
	_, has = f.census().Record(bech(1))
	require.False(t, has, "the miss slid out of the history: nothing left to keep")
}
