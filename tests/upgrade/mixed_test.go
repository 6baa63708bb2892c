//go:build mixed

package upgrade_test

import (
	"os"
	"strconv"
	"testing"
	"time"

	ln "github.com/inferenced/inferenced/tests/internal/localnet"
)

// TestMixedBinariesAgree shows that a change of how the attestation work is
// done, not of what it computes, leaves the state machine as it was: two
// validators on an earlier build (MIXED_OLD, a commit of this repository)
// and two on a later one (MIXED_NEW, a commit; default: this checkout's
// binaries) run one chain for MIXED_BLOCKS blocks (default 100) with load,
// vote extensions and service reports, an executor dark, excluded and back,
// then another failing a share of its requests; every node must compute
// the same app hash at every height. The genesis is the old build's (its
// own localnet script).
//
// Only builds of the same state-machine version can mix (a module's
// consensus version is part of the state from the first block), so this
// is a proof about a pair of commits, run on demand, not in make test:
//
//	make test-mixed MIXED_OLD=2d859e8 MIXED_NEW=<commit>
func TestMixedBinariesAgree(t *testing.T) {
	oldCommit := os.Getenv("MIXED_OLD")
	if oldCommit == "" {
		t.Fatal("MIXED_OLD: the commit of the earlier build (make test-mixed sets it)")
	}
	old := ln.BuildRelease(t, oldCommit)
	newBin, newName := ln.Binaries(t)+"/inferenced", "this checkout"
	if c := os.Getenv("MIXED_NEW"); c != "" {
		newBin, newName = ln.BuildRelease(t, c).Inferenced(), c
	}
	blocks := int64(100)
	if s := os.Getenv("MIXED_BLOCKS"); s != "" {
		b, err := strconv.ParseInt(s, 10, 64)
		if err != nil || b < 30 {
			t.Fatalf("MIXED_BLOCKS=%q: want a count of at least 30", s)
		}
		blocks = b
	}

	cfg := ln.DefaultConfig()
	cfg.PortOffset = 5200
	cfg.Inferenced = old.Inferenced()
	cfg.InitScript = old.InitScript()
	cfg.NodeBin = map[int]string{2: newBin, 3: newBin}
	n := ln.Start(t, cfg)
	n.WaitHeight(3, time.Minute)
	t.Logf("validators 0 and 1 on %s, 2 and 3 on %s", oldCommit, newName)

	load := n.StartLoad(3, "mixed", 15*time.Minute)
	start := n.Height()
	dark := n.Outage(3).Dark().AwaitExclusion(0, 2*time.Minute).Evidence()
	t.Logf("exec3 dark from %d, excluded at %d on %s evidence", dark.DarkAt+1, dark.ExcludedAt, dark.Kind)
	dark.Up().AwaitRecovery(3 * time.Minute)
	t.Logf("exec3 healthy again at %d by %s", dark.HealthyAt, dark.RestoredBy)
	degraded := n.Outage(2).Fail(40)
	n.WaitHeight(start+blocks, time.Duration(blocks)*2*time.Second+time.Minute)
	degraded.Up()
	if err := load.Stop(); err != nil {
		t.Logf("load driver stopped before it settled: %v", err)
	}

	top := min(n.HeightOn(0), n.HeightOn(1), n.HeightOn(2), n.HeightOn(3))
	if err := n.SameAppHashes(1, top, 1, 2, 3); err != nil {
		t.Fatal(err)
	}
	t.Logf("app hashes equal on 4 nodes (2 on %s, 2 on %s) at every height 1..%d", oldCommit, newName, top)
}
