package e2e_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	ln "github.com/inferenced/inferenced/tests/internal/localnet"
)

// joinEpoch is the scenario's epoch: short enough that the block-synced
// node replays an epoch boundary, long enough for the breaker's cooldowns
// (max 32) and the open inferences' expiry (40 blocks).
const joinEpoch = 60

// Scenario 13, nodes that join a running chain and a chain restarted from
// its export (one network): (a) node 4 joins by state sync from a snapshot
// taken after the breaker excluded an executor and while inferences are
// open, and holds node 0's module state at the snapshot and at the tip, with
// its own app hash equal to node 0's at every height it executed; (d)
// validator 3's consensus key is rotated to node 4's mid-epoch while
// attestation runs (rotation_test.go): node 4 signs for it from the apply
// height and its extensions count, an executor taken dark meanwhile is
// excluded; (b) node 5 starts from genesis and block-syncs the whole chain
// (health bundles, an epoch boundary, the rotation), (c) is stopped on the
// way and resumes; then every validator stops, node 0 exports (the
// rotation history and validator 3's new key in it), node 3 takes node 4's
// key, and the four restart from the export: vote extensions are on from
// its first block, validator 3's under its new key, and an executor taken
// dark is excluded by attestation within the budget.
func TestNodesJoinAndTheChainRestartsFromItsExport(t *testing.T) {
	cfg := ln.DefaultConfig()
	cfg.PortOffset = 5100
	cfg.EpochLength, cfg.ExpirationBlocks, cfg.MaxCooldown = joinEpoch, 40, 32
	cfg.FullNodes, cfg.SnapshotInterval, cfg.SnapshotKeepRecent = 2, 20, 2
	n := start(t, cfg)
	n.WaitHeight(3, time.Minute)
	load := n.StartLoad(2, "join", 10*time.Minute)

	dark := n.Outage(3).Dark().AwaitExclusion(0, time.Minute)
	var open []string
	for k := range 3 {
		id := fmt.Sprintf("open-%d", k)
		if code, log := n.StartInference("griefer", id, ln.Model, n.ExecutorAddr(k)); code != 0 {
			t.Fatalf("start %s: code %d: %s", id, code, log)
		}
		open = append(open, id)
	}
	startedBy := n.Height()
	snapshotAt := (startedBy/cfg.SnapshotInterval + 1) * cfg.SnapshotInterval
	n.WaitHeight(snapshotAt+2, 2*time.Minute)
	t.Logf("exec3 dark at %d, excluded at %d; %d inferences open by %d; snapshot due at %d",
		dark.DarkAt, dark.ExcludedAt, len(open), startedBy, snapshotAt)

	joinByStateSync(t, n, snapshotAt, cfg.SnapshotInterval, open)
	n.WaitHeight(joinEpoch+5, 3*time.Minute)
	rot := rotateToJoinedNode(t, n)
	joinByBlockSync(t, n)

	if err := load.Stop(); err != nil {
		t.Logf("load driver: %v", err)
	}
	restartFromExport(t, n, rot)
}

// moduleStatePaths are the x/inference answers a joined node must share
// with node 0: the breaker, the participants, the agents' standing and the
// open inferences.
func moduleStatePaths(n *ln.Net, open []string) []string {
	paths := []string{"excluded_executors", "participants", "transfer_agents", "epoch"}
	griefer := n.KeyAddress("griefer")
	for _, id := range open {
		paths = append(paths, "inferences/"+griefer+"/"+id)
	}
	return paths
}

func joinByStateSync(t *testing.T, n *ln.Net, snapshotAt, interval int64, open []string) {
	t.Helper()
	joined := time.Now()
	n.Join(4, ln.StateSync, snapshotAt, ln.KeepMonitor) // to sign for validator 3 in (d)
	n.WaitCaughtUp(4, 3*time.Minute)
	took := time.Since(joined).Round(100 * time.Millisecond)
	s, err := n.Sync(4)
	if err != nil {
		t.Fatal(err)
	}
	// The first block a restored node stores is the one after its snapshot.
	restored := s.Earliest - 1
	if restored < snapshotAt || restored%interval != 0 {
		t.Fatalf("node 4's first block %d: not restored from a snapshot at or after %d", s.Earliest, snapshotAt)
	}
	paths := moduleStatePaths(n, open)
	for _, h := range []int64{restored, s.Latest - 1} {
		var want, got string
		n.Eventually(fmt.Sprintf("module state at %d", h), 30*time.Second, func() (err error) {
			if want, err = n.ModuleState(0, h, paths...); err != nil {
				return err
			}
			got, err = n.ModuleState(4, h, paths...)
			return err
		})
		if got != want {
			t.Errorf("module state at %d: node 4\n%s\nnode 0\n%s", h, got, want)
		}
	}
	excluded, err := n.ExcludedAt(4, restored)
	if err != nil || len(excluded) == 0 {
		t.Errorf("node 4 at the snapshot: excluded executors %v, %v; want exec3", excluded, err)
	}
	if err := n.SameResultAppHashes(4, restored+1, s.Latest-1); err != nil {
		t.Error(err)
	}
	t.Logf("(a) state sync: node 4 restored height %d (trusting %d), reached the tip %d in %s; module state equal at %d and %d "+
		"(%d executors excluded, %d open inferences); its own app hash equal to node 0's at every height %d..%d",
		restored, snapshotAt, s.Latest, took, restored, s.Latest-1, len(excluded), len(open), restored+1, s.Latest-1)
}

func joinByBlockSync(t *testing.T, n *ln.Net) {
	t.Helper()
	joined := time.Now()
	n.Join(5, ln.BlockSync, 0)
	tip := n.Height()
	var stoppedAt int64
	for deadline := time.Now().Add(2 * time.Minute); stoppedAt < tip/2; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("node 5 at %d, below half of %d after 2 minutes", n.HeightOn(5), tip)
		}
		stoppedAt = n.HeightOn(5)
	}
	n.StopNode(5)
	n.WaitHeight(n.Height()+10, time.Minute)
	n.Join(5, ln.BlockSync, 0)
	var resumedAt int64
	n.Eventually("node 5 answers again", time.Minute, func() error {
		s, err := n.Sync(5)
		resumedAt = s.Latest
		return err
	})
	if resumedAt < stoppedAt {
		t.Errorf("node 5 restarted at %d, below the %d it had reached: it did not resume", resumedAt, stoppedAt)
	}
	n.WaitCaughtUp(5, 3*time.Minute)
	took := time.Since(joined).Round(100 * time.Millisecond)
	s, err := n.Sync(5)
	if err != nil {
		t.Fatal(err)
	}
	if s.Earliest != 1 {
		t.Errorf("node 5's first block %d, want 1: it did not replay the chain", s.Earliest)
	}
	bundles := 0
	for h := int64(1); h < s.Latest; h++ {
		if n.HasBundle(h) {
			bundles++
		}
	}
	if bundles == 0 || s.Latest <= joinEpoch {
		t.Errorf("node 5 replayed %d blocks with %d health bundles: want bundles and the epoch boundary at %d", s.Latest, bundles, joinEpoch)
	}
	if err := n.SameResultAppHashes(5, 1, s.Latest-1); err != nil {
		t.Error(err)
	}
	t.Logf("(b, c) block sync: node 5 from genesis to the tip %d in %s (%d blocks with health bundles, epoch boundary at %d); "+
		"stopped at %d of %d, resumed from %d; its own app hash equal to node 0's at every height 1..%d",
		s.Latest, took, bundles, joinEpoch, stoppedAt, tip, resumedAt, s.Latest-1)
}

func restartFromExport(t *testing.T, n *ln.Net, rot ln.Rotation) {
	t.Helper()
	n.Stop()
	doc := ln.Export(t, n.Inferenced(), n.NodeHome(0), 0)
	var genesis struct {
		InitialHeight int64 `json:"initial_height"`
		Consensus     struct {
			Params struct {
				ABCI struct {
					EnableHeight string `json:"vote_extensions_enable_height"`
				} `json:"abci"`
			} `json:"params"`
			Validators []exportedValidator `json:"validators"`
		} `json:"consensus"`
		AppState struct {
			Staking struct {
				History []exportedRotation `json:"consensus_key_rotation_history"`
			} `json:"staking"`
		} `json:"app_state"`
	}
	if err := json.Unmarshal(doc, &genesis); err != nil {
		t.Fatal(err)
	}
	initial := genesis.InitialHeight
	if enable := ln.Atoi(t, genesis.Consensus.Params.ABCI.EnableHeight); enable != initial {
		t.Fatalf("exported genesis: initial height %d, vote_extensions_enable_height %d; want them equal", initial, enable)
	}
	checkExportedRotation(t, rot, genesis.Consensus.Validators, genesis.AppState.Staking.History)
	// Validator 3 signs with node 4's key since (d); the restart runs the
	// four validators' homes (RestartFromGenesis removes the full nodes'),
	// so node 3 takes that key back, as its operator would move it.
	n.CopyConsensusKey(4, 3)
	restarted := time.Now()
	n.RestartFromGenesis(doc)
	n.WaitHeight(initial+3, 2*time.Minute)
	took := time.Since(restarted).Round(100 * time.Millisecond)
	for h := initial + 1; h <= initial+3; h++ {
		if !n.HasBundle(h) {
			t.Errorf("block %d of the restarted chain has no health bundle", h)
		}
	}
	fresh := n.Outage(2).Dark().AwaitExclusion(0, 2*time.Minute).Evidence()
	blocks := fresh.ExcludedAt - (fresh.DarkAt + 1)
	if fresh.Kind != ln.Attested || blocks > maxBlocksToExclusion {
		t.Errorf("exec2 excluded %d blocks after its first dark block by %s evidence; want attestation within %d",
			blocks, fresh.Kind, maxBlocksToExclusion)
	}
	tip := n.Height() - 1 // every node has served it
	if err := n.SameAppHashes(initial, tip, 1, 2, 3); err != nil {
		t.Errorf("restarted chain: %v", err)
	}
	if addr := n.ValidatorAddr(3); addr != rot.New {
		t.Errorf("restarted node 3 signs as %s, want validator 3's rotated key %s", addr, rot.New)
	}
	for h := initial + 2; h <= tip; h++ {
		if c, err := n.CheckBundle(h); err != nil || len(c.Pruned) > 0 {
			t.Errorf("restarted chain, bundle of block %d: %v, pruned %v", h, err, c.Pruned)
		}
	}
	t.Logf("export and restart: exported at %d, restarted at %d with vote extensions on from it, first block in %s; "+
		"health bundles from %d, verified with CometBFT's keys, none pruned; exec2 dark from %d, excluded at %d (%d blocks, %s evidence); "+
		"app hashes equal on 4 nodes %d..%d",
		initial-1, initial, took, initial+1, fresh.DarkAt+1, fresh.ExcludedAt, blocks, fresh.Kind, initial, tip)
}

// exportedValidator is a genesis validator; exportedRotation a record of
// staking's consensus_key_rotation_history.
type (
	exportedValidator struct {
		Address string `json:"address"`
	}
	exportedRotation struct {
		Validator string `json:"validator_address"`
		Old       string `json:"old_consensus_address"`
	}
)

// checkExportedRotation: the export carries validator 3's rotation, its
// new key in the genesis validators and its old address in staking's
// rotation history (the evidence lock and the one-rotation gate).
func checkExportedRotation(t *testing.T, rot ln.Rotation, validators []exportedValidator, history []exportedRotation) {
	t.Helper()
	var hasOld, hasNew, inHistory bool
	for _, v := range validators {
		hasOld = hasOld || strings.EqualFold(v.Address, rot.Old)
		hasNew = hasNew || strings.EqualFold(v.Address, rot.New)
	}
	for _, r := range history {
		inHistory = inHistory || (r.Validator == rot.Validator && r.Old == rot.OldCons)
	}
	if hasOld || !hasNew || !inHistory {
		t.Fatalf("exported genesis: old key %s among the validators %v, new key %s %v, rotation in the history %v (%+v)",
			rot.Old, hasOld, rot.New, hasNew, inHistory, history)
	}
	t.Logf("export: validator 3 with its new key %s, its rotation from %s in staking's history", rot.New, rot.OldCons)
}
