package upgrade_test

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	ln "github.com/inferenced/inferenced/tests/internal/localnet"
)

// The steps the cosmovisor upgrade scenarios share (v2 from
// PREVIOUS_RELEASE_V2, v4 from PREVIOUS_RELEASE): four validators under
// cosmovisor on a previous release with this one staged as the upgrade,
// the previous release's load driver running and an executor excluded
// before the halt, inferences open across it, node 3 joining late.

// startOnRelease starts four validators under cosmovisor on prev with this
// release staged as upgrade name, inferences expiring after expiration
// blocks (long enough for those opened before the halt to cross it).
func startOnRelease(t *testing.T, prev ln.Release, portOffset int, name string, expiration int64) *ln.Net {
	t.Helper()
	cfg := ln.DefaultConfig()
	cfg.PortOffset = portOffset
	cfg.ExpirationBlocks = expiration
	cfg.Inferenced = prev.Inferenced()
	cfg.InitScript = prev.InitScript()
	cfg.Cosmovisor, cfg.CosmovisorBin = true, ln.CosmovisorBin(t)
	cfg.UpgradeName, cfg.UpgradeBin = name, filepath.Join(ln.Binaries(t), "inferenced")
	n := ln.Start(t, cfg)
	n.WaitHeight(3, time.Minute)
	return n
}

// halt is a scheduled upgrade as the scenario drove it.
type halt struct {
	Name         string
	At, PassedAt int64 // the plan height H; the height the proposal had passed by
	LateStopped  int64 // when node 3 stopped, to join late
	Starter      string
	Open         []string // inferences Starter opened before the halt, finished by nobody
	OpenedBy     int64
	// OldBefore and OldAfter are the inferences the previous release's
	// load driver finished up to H and after it.
	OldBefore, OldAfter int
}

// scheduleHalt has governance pass a MsgSoftwareUpgrade for name ahead
// blocks from now (the 20 s voting period is about 35 blocks here), stops
// node 3 at H-15 to join late, has starter (a key the load driver does not
// play) open three inferences on executors 0-2 at H-8 with the previous
// release's CLI, and waits until validators 0-2 run this release past H.
func scheduleHalt(t *testing.T, n *ln.Net, prev ln.Release, oldLoad *ln.Load, name, summary string, ahead int64, starter string) halt {
	t.Helper()
	h := halt{Name: name, At: n.Height() + ahead, Starter: starter}
	plan := map[string]any{"@type": "/cosmos.upgrade.v1beta1.MsgSoftwareUpgrade", "authority": n.GovAddress(),
		"plan": map[string]any{"name": name, "height": fmt.Sprint(h.At)}}
	n.PassProposal(n.ProposalFile("Upgrade to "+name, summary, plan), 2*time.Minute)
	h.PassedAt = n.Height()
	n.WaitHeight(h.At-15, 3*time.Minute)
	n.StopNode(3)
	h.LateStopped = n.Height()
	n.WaitHeight(h.At-8, 2*time.Minute)
	for k := range 3 {
		id := fmt.Sprintf("across-%s-%d", name, k)
		if code, log := n.TxOf(prev, starter, "inference", "start-inference", id, ln.Model, n.ExecutorAddr(k)); code != 0 {
			t.Fatalf("start %s on the previous release: code %d: %s", id, code, log)
		}
		h.Open = append(h.Open, id)
	}
	h.OpenedBy = n.Height()

	// The halt: the previous release stores block H but cannot run it.
	n.WaitHeight(h.At, 3*time.Minute)
	for i := 0; i < 3; i++ {
		waitUpgraded(t, n, i, name, h.At, 2*time.Minute)
	}
	n.WaitHeight(h.At+15, 3*time.Minute)
	if err := oldLoad.Stop(); err != nil {
		t.Logf("previous release's load driver: %v", err)
	}
	h.OldBefore, h.OldAfter = answered(oldLoad.Events(), 0, h.At), answered(oldLoad.Events(), h.At+1, 1<<62)
	// A header's time is the median of the last block's precommits: block
	// H+1's was voted before the halt, H+2's is the first after it.
	t.Logf("timeline: plan height %d (proposal passed by %d); node 3 stopped at %d; %d inferences opened by %d; blocks %d..%d at %s %s %s %s (the halt: %s from H+1 to H+2)",
		h.At, h.PassedAt, h.LateStopped, len(h.Open), h.OpenedBy, h.At, h.At+3, blockTime(t, n, h.At), blockTime(t, n, h.At+1),
		blockTime(t, n, h.At+2), blockTime(t, n, h.At+3), n.BlockTimes(h.At+1, h.At+2))
	logCosmovisor(t, n, 0)
	t.Logf("the previous release's load driver: %d inferences finished before the halt, %d after", h.OldBefore, h.OldAfter)
	if h.OldBefore == 0 {
		t.Errorf("the previous release's load driver finished nothing before the halt:\n%s", oldLoad.Output())
	}
	return h
}

// joinLate starts node 3 again: cosmovisor runs the previous release up to
// H (block sync), then this one.
func (h halt) joinLate(t *testing.T, n *ln.Net) {
	t.Helper()
	if out, err := n.Script(5*time.Minute, "start"); err != nil {
		t.Fatalf("start node 3: %v\n%s", err, out)
	}
	joined := time.Now()
	waitUpgraded(t, n, 3, h.Name, h.At, 3*time.Minute)
	n.WaitCaughtUp(3, 3*time.Minute)
	t.Logf("node 3 joined late: caught up at %d in %s", n.HeightOn(3), time.Since(joined).Round(time.Second))
	logCosmovisor(t, n, 3) // which of cosmovisor and cosmovisor-run.sh made the switch
}

// openExpired waits until every inference opened before the halt has
// expired on this release (the expiry queue carried across it).
func (h halt) openExpired(t *testing.T, n *ln.Net) {
	t.Helper()
	starter := n.KeyAddress(h.Starter)
	for _, id := range h.Open {
		n.Eventually("inference "+id+" expired", 2*time.Minute, func() error {
			if inf := n.Inference(starter, id); inf.Status != ln.Expired {
				return fmt.Errorf("%s %s (expires at %s)", id, inf.Status, inf.ExpirationHeight)
			}
			return nil
		})
	}
	t.Logf("the %d inferences open at the halt (opened by %d) expired on this release", len(h.Open), h.OpenedBy)
}

// freshOutage: the executor dark since before the upgrade comes back
// through a probe on this release, then a fresh outage is excluded within
// 3 blocks and recovers. (Both out at once would exceed
// health_cb_max_excluded_weight_pct with 4 executors.)
func freshOutage(t *testing.T, n *ln.Net, dark *ln.Outage) {
	t.Helper()
	dark.Up().AwaitRecovery(3 * time.Minute)
	t.Logf("this release: exec3 (excluded before the upgrade) healthy at %d by %s", dark.HealthyAt, dark.RestoredBy)
	fresh := n.Outage(2).Dark().AwaitExclusion(0, 2*time.Minute).Evidence()
	// Counted as tests/e2e counts it: from the first block of the outage.
	blocks := fresh.ExcludedAt - (fresh.DarkAt + 1)
	t.Logf("this release: exec2 dark from block %d, excluded at %d (%d blocks, %s evidence)", fresh.DarkAt+1, fresh.ExcludedAt, blocks, fresh.Kind)
	if blocks > maxBlocksToExclusion {
		t.Errorf("exec2 excluded %d blocks after its first dark block, want within %d", blocks, maxBlocksToExclusion)
	}
	fresh.Up().AwaitRecovery(3 * time.Minute)
	t.Logf("this release: exec2 healthy again at %d by %s", fresh.HealthyAt, fresh.RestoredBy)
}

// maxBlocksToExclusion is the exclusion budget tests/e2e asserts.
const maxBlocksToExclusion = 3

// exportAfter stops node 2, exports it at the upgrade height with this
// release and starts it again.
func (h halt) exportAfter(t *testing.T, n *ln.Net) []byte {
	t.Helper()
	n.StopNode(2)
	after := ln.Export(t, filepath.Join(ln.Binaries(t), "inferenced"), filepath.Join(n.Home, "node2"), h.At)
	if out, err := n.Script(5*time.Minute, "start"); err != nil {
		t.Fatalf("restart node 2: %v\n%s", err, out)
	}
	return after
}
