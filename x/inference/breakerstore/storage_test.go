package breakerstore_test

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestHealthyTrafficWritesNoBreakerState(t *testing.T) {
	f := newBreakerFixture(t, breakerParams())
	for range 5 {
		for i := byte(1); i <= 4; i++ {
			id := f.newID()
			f.mustStart(id, i, "m")
			require.NoError(t, f.finish(i, id))
		}
		f.next()
	}
	c := f.census()
	require.Empty(t, c.ExecutorHealth)
	require.Empty(t, c.PendingSamples)
	require.Zero(t, c.SampleSequence, "no sample was queued")
}

func TestRecordOfAnExecutorWithoutRecentMissesIsDropped(t *testing.T) {
	f := newBreakerFixture(t, breakerParams())
	f.feed(1, "m")
	has := f.hasRecord(1)
	require.True(t, has)
	for range 64 {
		id := f.newID()
		f.mustStart(id, 1, "m")
		require.NoError(t, f.finish(1, id))
	}
	f.next()
	has = f.hasRecord(1)
	require.False(t, has, "the miss slid out of the history: nothing left to keep")
}
