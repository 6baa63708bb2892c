package e2e_test

import (
	"fmt"
	"reflect"
	"testing"
	"time"

	ln "github.com/inferenced/inferenced/tests/internal/localnet"
)

// Scenario 5, crash and restart: validator 2 is killed mid-epoch while an
// executor is excluded, the others go on, and on restart it catches up;
// every node then reports the same app hash at every height compared, and
// the restarted node holds the same breaker state as the others.
func TestValidatorCrashAndRestart(t *testing.T) {
	cfg := ln.DefaultConfig()
	cfg.PortOffset = 4000
	cfg.InitialCooldown = 60
	n := start(t, cfg)
	dead := n.ExecutorAddr(1)
	n.WaitHeight(5, time.Minute)
	excluded := n.Outage(1).Dark().AwaitExclusion(0, time.Minute).Exclusion

	n.Kill(2)
	killedAt := n.Height()
	n.WaitHeight(killedAt+10, time.Minute) // three of four go on
	if out, err := n.Script(2*time.Minute, "start"); err != nil {
		t.Fatalf("restart node 2: %v\n%s", err, out)
	}
	restartedAt := n.Height()
	var caughtUp int64
	for deadline := time.Now().Add(2 * time.Minute); caughtUp == 0; time.Sleep(200 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("node 2 at %d, node 0 at %d: no catch-up in 2 minutes", n.HeightOn(2), n.Height())
		}
		if h := n.HeightOn(2); h > 0 && h >= n.Height() {
			caughtUp = h
		}
	}
	n.WaitHeight(caughtUp+2, time.Minute)

	// App hashes of every block from before the crash to after catch-up.
	from := ln.Atoi(t, excluded.ExcludedAt) - 2
	if err := n.SameAppHashes(from, caughtUp+1, 1, 2, 3); err != nil {
		t.Error(err)
	}
	compared := caughtUp + 2 - from
	// All four read at one height, so a block committing between the
	// readings cannot make them differ.
	states := make([]ln.HealthJSON, 4)
	for i := range states {
		n.Eventually(fmt.Sprintf("node %d's breaker state at %d", i, caughtUp+1), 30*time.Second, func() (err error) {
			states[i], err = n.HealthAt(i, dead, caughtUp+1)
			return err
		})
	}
	t.Logf("exec1 %s EXCLUDED at %s (cooldown %s); node 2 killed at %d, restarted at %d, caught up at %d",
		dead, excluded.ExcludedAt, excluded.CooldownBlocks, killedAt, restartedAt, caughtUp)
	t.Logf("  app hashes of blocks %d..%d equal on all 4 nodes: %d heights compared; breaker state at %d:", from, caughtUp+1, compared, caughtUp+1)
	for i, s := range states {
		t.Logf("  node %d: exec1 %s since %s, excluded at %s, eligible %s, exclusions %d", i, s.State, s.SinceHeight,
			s.ExcludedAt, s.EligibleHeight, s.Exclusions)
	}
	for i := 1; i < 4; i++ {
		if !reflect.DeepEqual(states[i], states[0]) {
			t.Errorf("node %d breaker state %+v, node 0 %+v", i, states[i], states[0])
		}
	}
	if states[2].State != ln.Excluded || states[2].ExcludedAt != excluded.ExcludedAt {
		t.Errorf("restarted node lost the exclusion: %+v", states[2])
	}
}
