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
// wrong-epoch lies are signed (the liar's own check accepts its own lie,
// which CometBFT v0.40 runs before signing and panics the node on
// refusing): the honest validators refuse them, so they drop its
// precommits. While it lies so, the liar is in no commit but those of the
// blocks it proposes (its own precommit), its power does not count, the
// chain goes on with 3 of 4, its x/slashing missed-blocks counter rises,
// and its node does not crash: it is at the tip when the mode ends, and it
// is not jailed within the run (the localnet's slashing params, read from
// the chain, are the SDK's: more than 50 of 100 blocks missed jails). Then, on the same network,
// it lies about service only (lying_service_test.go): every executor or
// one executor at 100%, a service field that does not decode, and every
// executor at 0% while one really fails half its inferences.
func TestOneLyingValidatorOfFour(t *testing.T) {
	skipShort(t) // before the build
	lying := ln.BuildLying(t)
	modeFile := filepath.Join(t.TempDir(), "lie-mode")
	cfg := ln.DefaultConfig()
	cfg.PortOffset = 2000
	cfg.InitialCooldown, cfg.MaxCooldown = 4, 8
	cfg.NodeBin = map[int]string{3: lying}
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
		r.signs = readLiarSigns(t, n, liar, lyingFrom, n.Height())
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
	t.Logf("x/slashing: window %d blocks, min signed %s: jailed above %d missed; the liar's counter at the end %d, jailed %t",
		slashing.Window, slashing.MinSigned, slashing.MaxMissed, final.MissedBlocks, final.Jailed())
	if final.Jailed() || final.Tombstoned || final.MissedBlocks > slashing.MaxMissed {
		t.Errorf("the liar was jailed within the run (%+v; params %+v): its later lies were not a validator's", final, slashing)
	}
}

// refusedLies are the modes whose extensions the honest validators'
// VerifyVoteExtension refuses: with the extension, the precommit.
var refusedLies = map[string]bool{"garbage": true, "oversized": true, "wrong-epoch": true, "service-garbage": true}

// liarSigns is what the commits of the blocks (from, to] say of the liar
// (validator 3): of the blocks another validator proposed, in how many
// commits it is absent; how many it proposed (whose commit carries its
// own precommit: a proposer never refuses its own vote); its x/slashing
// missed-blocks counter at from and at to; whether its node was at the
// tip (to) after.
type liarSigns struct {
	from, to                 int64
	others, absent, proposed int
	missedFrom, missedTo     int64
	atTip                    bool
}

const liarSignsHeader = "liar absent/others' commits, own proposals, missed before->after, at tip"

func (s liarSigns) String() string {
	return fmt.Sprintf("%d/%d, %d, %d->%d, %t", s.absent, s.others, s.proposed, s.missedFrom, s.missedTo, s.atTip)
}

// readLiarSigns reads the liar's commits of (from, to], its signing info
// at both ends, and waits (at most 30 s) for its node to reach to: a node
// that crashed or stalled never does.
func readLiarSigns(t *testing.T, n *ln.Net, liar string, from, to int64) liarSigns {
	t.Helper()
	s := liarSigns{from: from, to: to}
	for h := from + 1; h <= to; h++ {
		c, err := n.LastCommitOf(h)
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case c.Proposer == liar:
			s.proposed++
		case !c.Signed[liar]:
			s.others++
			s.absent++
		default:
			s.others++
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

// check asserts what a lie of mode does to the liar's votes. refused: the
// honest validators dropped every precommit of its (it is absent from
// every commit of the blocks others proposed), so its missed-blocks
// counter rose, by no more than those absences. Otherwise its precommits
// count as anyone's: it is in most commits.
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
	if s.absent != s.others {
		t.Errorf("%s: the liar's refused precommits are in %d of %d commits of the blocks others proposed, want none",
			mode, s.others-s.absent, s.others)
	}
	if rise := s.missedTo - s.missedFrom; rise <= 0 || rise > int64(s.absent) {
		t.Errorf("%s: the liar's missed-blocks counter went %d -> %d over %d absences, want a rise of 1..%d",
			mode, s.missedFrom, s.missedTo, s.absent, s.absent)
	}
}
