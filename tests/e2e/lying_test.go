package e2e_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	ln "github.com/inferenced/inferenced/tests/internal/localnet"
)

// Scenario 4, one lying validator of four (25% of the power), built with
// -tags lying and switched from mode to mode through a file: it reports
// every executor missed, every executor ok (the dead one too), or sends
// garbage, oversized or wrong-epoch extensions. In every mode a healthy
// executor is never excluded, the dead one is still excluded within 3
// blocks, and blocks keep coming at their pace. The garbage, oversized and
// wrong-epoch lies are signed (the liar's own check accepts its own lie:
// CometBFT v0.40 runs it before signing and panics the node on a
// refusal) for the honest validators to refuse. While it lies so, no
// health bundle counts its extension; some of its precommits are refused
// with it (absent from the commit, and x/slashing counts the misses, not
// enough to jail it within the run: the scenario's signed_blocks_window
// is 1000, jailing above 500 missed), the others come in late and count
// for the commit (checkRefusedPrecommits); its node does not crash: it is
// at the tip when each mode ends. Then, on the same network, it lies
// about service only (lying_service_test.go): every executor or one
// executor at 100%, a service field that does not decode, and every
// executor at 0% while one really fails half its inferences.
func TestOneLyingValidatorOfFour(t *testing.T) {
	skipShort(t) // before the build
	lying := ln.BuildLying(t)
	modeFile := filepath.Join(t.TempDir(), "lie-mode")
	cfg := ln.DefaultConfig()
	cfg.PortOffset = 2000
	cfg.InitialCooldown, cfg.MaxCooldown = 4, 8
	cfg.NodeBin = map[int]string{3: lying}
	// The refused modes cost the liar some precommits (x/slashing counts
	// them missed): a window of 1000 keeps ~60 blocks of them far from
	// jailing it, whose tests of service lies follow on the same network.
	cfg.SignedBlocksWindow = 1000
	cfg.NodeEnv = map[int]string{3: "INFERENCED_LIE=file:" + modeFile}
	n := start(t, cfg)
	dead := n.ExecutorAddr(1)
	n.WaitHeight(10, time.Minute) // honest until the mode file is written
	normal := n.BlockTimes(4, 10)

	type result struct {
		mode                      string
		darkAt, excludedAt        int64
		blockTime                 time.Duration
		wronglyExcluded, liarVote string
		signs                     liarSigns
	}
	liar := n.ValidatorAddr(3)
	var results []result
	for k, mode := range []string{"all-miss", "all-ok", "garbage", "oversized", "wrong-epoch"} {
		if err := os.WriteFile(modeFile, []byte(mode), 0o600); err != nil {
			t.Fatal(err)
		}
		from := n.Height()
		n.WaitHeight(from+3, time.Minute) // the liar has read its mode
		lyingFrom := n.Height()
		r := result{mode: mode}
		// The lie is visible in the bundle: the liar's vote on exec1, or
		// its extension pruned.
		r.liarVote = n.VoteOf(n.Height(), 3, dead)
		// Every poll of the outage also checks that no other executor is out.
		o := n.Outage(1).WatchOthers().DarkAndBack(k + 1)
		r.wronglyExcluded = o.Others()
		r.darkAt, r.excludedAt = o.DarkAt, o.ExcludedAt
		r.blockTime = n.BlockTimes(from, n.Height())
		r.signs = readLiarSigns(t, n, liar, lyingFrom, n.Height(), refusedLies[mode])
		results = append(results, r)
	}
	lies := serviceLies(t, n, modeFile)
	slashing, err := n.Slashing()
	if err != nil {
		t.Fatal(err)
	}
	final, err := n.SigningInfoAt(liar, 0)
	if err != nil {
		t.Fatal(err)
	}

	t.Logf("validator 3 of 4 lies; executor exec1 %s goes dark once per mode; normal block time %s", dead, normal.Round(time.Millisecond))
	t.Logf("  %-12s %-34s %6s %9s %7s %10s %-22s %s", "mode", "liar's vote on exec1 (bundle)", "dark", "excluded", "blocks", "block time",
		"healthy executors out", liarSignsHeader)
	for _, r := range results {
		wrong := r.wronglyExcluded
		if wrong == "" {
			wrong = "none"
		}
		t.Logf("  %-12s %-34s %6d %9d %7d %10s %-22s %s", r.mode, r.liarVote, r.darkAt, r.excludedAt,
			r.excludedAt-(r.darkAt+1), r.blockTime.Round(time.Millisecond), wrong, r.signs)
	}
	for _, r := range results {
		r.signs.check(t, r.mode, refusedLies[r.mode])
		if r.wronglyExcluded != "" {
			t.Errorf("%s: healthy executors excluded: %s", r.mode, r.wronglyExcluded)
		}
		if got := r.excludedAt - (r.darkAt + 1); got > maxBlocksToExclusion {
			t.Errorf("%s: dead executor excluded %d blocks after its outage could be seen, want <= %d", r.mode, got, maxBlocksToExclusion)
		}
		if r.blockTime > 2*normal+200*time.Millisecond {
			t.Errorf("%s: blocks every %s, normally %s: the chain slowed down", r.mode, r.blockTime, normal)
		}
	}
	checkServiceLies(t, lies, normal)
	var refused []liarSigns
	for _, r := range results {
		if refusedLies[r.mode] {
			refused = append(refused, r.signs)
		}
	}
	for _, r := range lies {
		if refusedLies[r.mode] {
			refused = append(refused, r.signs)
		}
	}
	checkRefusedPrecommits(t, refused)
	// The highest the liar's counter was read at: with every precommit of
	// the refused modes dropped it would reach about 47 (their some 63
	// blocks, a quarter its own proposals, all within one window).
	peak := final.MissedBlocks
	for _, r := range results {
		peak = max(peak, r.signs.missedFrom, r.signs.missedTo)
	}
	for _, r := range lies {
		peak = max(peak, r.signs.missedFrom, r.signs.missedTo)
	}
	t.Logf("x/slashing: window %d blocks, min signed %s: jailed above %d missed; the liar's counter at most %d, at the end %d, jailed %t",
		slashing.Window, slashing.MinSigned, slashing.MaxMissed, peak, final.MissedBlocks, final.Jailed())
	if final.Jailed() || final.Tombstoned || peak > slashing.MaxMissed {
		t.Errorf("the liar was jailed within the run (%+v; params %+v): its later lies were not a validator's", final, slashing)
	}
}

// refusedLies are the modes whose extensions the honest validators'
// VerifyVoteExtension refuses.
var refusedLies = map[string]bool{"garbage": true, "oversized": true, "wrong-epoch": true, "service-garbage": true}

// liarSigns is what the blocks (from, to] say of the liar (validator 3).
// Of the blocks another validator proposed: in how many commits it is
// absent (an honest validator refused its precommit with its extension)
// and in how many present; how many it proposed itself (its commit
// carries its own precommit). In the refused modes, how many health
// bundles count its extension (none may). Its x/slashing missed-blocks
// counter at from and at to, and whether its node reached to.
type liarSigns struct {
	from, to                 int64
	others, absent, proposed int
	counted                  int // bundles whose vote of the liar's is attested (read in the refused modes)
	missedFrom, missedTo     int64
	atTip                    bool
}

const liarSignsHeader = "liar absent/others' commits, own proposals, bundles counting it, missed before->after, at tip"

func (s liarSigns) String() string {
	return fmt.Sprintf("%d/%d, %d, %d, %d->%d, %t", s.absent, s.others, s.proposed, s.counted, s.missedFrom, s.missedTo, s.atTip)
}

// readLiarSigns reads the liar's commits of (from, to], in the refused
// modes its vote in each health bundle, its signing info at both ends,
// and waits (at most 30 s) for its node to reach to: a node that crashed
// or stalled never does.
func readLiarSigns(t *testing.T, n *ln.Net, liar string, from, to int64, refused bool) liarSigns {
	t.Helper()
	s := liarSigns{from: from, to: to}
	healthy := n.ExecutorAddr(0)
	for h := from + 1; h <= to; h++ {
		c, err := n.LastCommitOf(h)
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case c.Proposer == liar:
			s.proposed++
		case c.Absent(liar): // a nil precommit (no extension) counts as signed
			s.others++
			s.absent++
		default:
			s.others++
		}
		if refused {
			// Its verdict on a healthy executor, or its vote's status
			// (pruned: in the commit, its extension dropped; absent).
			if v := n.VoteOf(h, 3, healthy); v != "pruned" && v != "absent" {
				t.Logf("block %d: the liar's vote in the bundle: %s", h, v)
				s.counted++
			}
		}
	}
	for _, at := range []struct {
		h   int64
		out *int64
	}{{from, &s.missedFrom}, {to, &s.missedTo}} {
		info, err := n.SigningInfoAt(liar, at.h)
		if err != nil {
			t.Fatal(err)
		}
		*at.out = info.MissedBlocks
	}
	n.Eventually("the liar's node at the tip", 30*time.Second, func() error {
		if h := n.HeightOn(3); h < to {
			return fmt.Errorf("the liar's node is at %d (0: it does not answer), the chain at %d", h, to)
		}
		return nil
	})
	s.atTip = true
	return s
}

// check asserts what a lie of mode did to the liar's votes. Refused: no
// bundle counts its extension, and its missed-blocks counter rose by no
// more than its absences (the window's older misses may leave it). Not
// refused: its precommits count as anyone's, it is in most commits.
func (s liarSigns) check(t *testing.T, mode string, refused bool) {
	t.Helper()
	if s.others == 0 {
		t.Errorf("%s: no block of %d..%d proposed by an honest validator to judge by", mode, s.from+1, s.to)
		return
	}
	if !refused {
		if 2*s.absent >= s.others {
			t.Errorf("%s: its extensions are valid, yet the liar is absent from %d of %d commits", mode, s.absent, s.others)
		}
		return
	}
	if s.counted > 0 {
		t.Errorf("%s: %d health bundles of %d..%d count the liar's refused extension", mode, s.counted, s.from+1, s.to)
	}
	if rise := s.missedTo - s.missedFrom; rise > int64(s.absent) {
		t.Errorf("%s: the liar's missed-blocks counter went %d -> %d, more than its %d absences", mode, s.missedFrom, s.missedTo, s.absent)
	}
}

// checkRefusedPrecommits asserts that, over the refused modes, the
// honest validators dropped some of the liar's precommits (absent from
// commits) and x/slashing counted them. They do not drop them all:
// CometBFT adds a precommit for the previous height that arrives during
// timeout_commit to the last commit without VerifyVoteExtension
// (consensus/state.go addVote), so the liar's precommit, re-gossiped, is
// mostly in the commit, and only the proposal's pruning keeps its
// extension out of the bundle.
func checkRefusedPrecommits(t *testing.T, signs []liarSigns) {
	t.Helper()
	var absent, present int
	var rise int64
	for _, s := range signs {
		absent, present, rise = absent+s.absent, present+s.others-s.absent, rise+s.missedTo-s.missedFrom
	}
	t.Logf("refused modes: the liar absent from %d and present in %d commits of blocks others proposed; missed-blocks counter +%d",
		absent, present, rise)
	if absent == 0 || rise <= 0 {
		t.Errorf("refused modes: the liar absent from %d commits, its counter +%d: no precommit of its was refused", absent, rise)
	}
}
