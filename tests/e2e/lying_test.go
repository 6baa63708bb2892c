package e2e_test

import (
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
// blocks, and blocks keep coming at their pace. Then, on the same network,
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
	}
	var results []result
	for k, mode := range []string{"all-miss", "all-ok", "garbage", "oversized", "wrong-epoch"} {
		if err := os.WriteFile(modeFile, []byte(mode), 0o600); err != nil {
			t.Fatal(err)
		}
		from := n.Height()
		n.WaitHeight(from+3, time.Minute) // the liar has read its mode
		r := result{mode: mode}
		// The lie is visible in the bundle: the liar's vote on exec1, or
		// its extension pruned.
		r.liarVote = n.VoteOf(n.Height(), 3, dead)
		// Every poll of the outage also checks that no other executor is out.
		o := n.Outage(1).WatchOthers().DarkAndBack(k + 1)
		r.wronglyExcluded = o.Others()
		r.darkAt, r.excludedAt = o.DarkAt, o.ExcludedAt
		r.blockTime = n.BlockTimes(from, n.Height())
		results = append(results, r)
	}
	lies := serviceLies(t, n, modeFile)

	t.Logf("validator 3 of 4 lies; executor exec1 %s goes dark once per mode; normal block time %s", dead, normal.Round(time.Millisecond))
	t.Logf("  %-12s %-34s %6s %9s %7s %10s %s", "mode", "liar's vote on exec1 (bundle)", "dark", "excluded", "blocks", "block time", "healthy executors excluded")
	for _, r := range results {
		wrong := r.wronglyExcluded
		if wrong == "" {
			wrong = "none"
		}
		t.Logf("  %-12s %-34s %6d %9d %7d %10s %s", r.mode, r.liarVote, r.darkAt, r.excludedAt,
			r.excludedAt-(r.darkAt+1), r.blockTime.Round(time.Millisecond), wrong)
	}
	for _, r := range results {
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
}
