package app

import "testing"

// A chain restarted from its export starts at the height after the export;
// vote extensions that were on must be on again from its first block.
func TestRestartedVoteExtensionsHeight(t *testing.T) {
	cases := []struct {
		name             string
		enabled, initial int64
		want             int64
	}{
		{"off stays off", 0, 101, 0},
		{"on since genesis: on from the first block", 2, 101, 101},
		{"on since the block before the export: on from the first block", 100, 101, 101},
		{"set for the first block: stays", 101, 101, 101},
		{"set for later by governance: that height stands", 500, 101, 500},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := RestartedVoteExtensionsHeight(c.enabled, c.initial); got != c.want {
				t.Fatalf("RestartedVoteExtensionsHeight(%d, %d) = %d, want %d", c.enabled, c.initial, got, c.want)
			}
		})
	}
}
