package monitor

import (
	"testing"
	"time"

	"cosmossdk.io/log/v2"
)

// Snapshot is what ExtendVote pays each height: one pass over the group
// under the read lock, no I/O.
func BenchmarkSnapshot10000(b *testing.B) {
	m, err := New(DefaultConfig(), nil, log.NewNopLogger())
	if err != nil {
		b.Fatal(err)
	}
	now := time.Now()
	m.sched.adopt(members(10000), now)
	m.watching, m.epoch = true, 1
	for i, t := range m.sched.targets {
		t.set, t.ok, t.at = true, i%3 != 0, now
	}
	for b.Loop() {
		if _, err := m.Snapshot(1, 10000); err != nil {
			b.Fatal(err)
		}
	}
}
