package keeper_test

import (
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/inferenced/inferenced/x/inference/types"
)

// Roles of the executors in the traffic-evidence property test.
const (
	roleHealthy  = iota // never fails; the griefer's target
	roleNoisy           // fails at gonka's 3.25% baseline
	roleDark            // goes dark (fails, attested missed) at a random block
	roleDegraded        // health endpoint OK, 40% of inferences fail
)

// Agents of the property test: two honest ones and a griefer.
var (
	honestAgents = []byte{agentB, agentC}
	griefer      = agentA
)

// TestPropertyTrafficEvidenceUnderRandomAgents runs whole epochs of random
// traffic from two honest agents and one griefer over four executors (one
// healthy that the griefer targets, one at the 3.25% baseline, one that
// goes dark, one degraded) and checks after every block:
//   - P1: the griefer's target is never EXCLUDED, never INACTIVE and has no
//     miss counted, whatever the griefer sends;
//   - P3: no honest agent is ever stopped; the griefer is stopped by the end;
//   - P4: the dark executor is EXCLUDED within 3 blocks of going dark;
//   - the breaker's own invariants, the cap and the fallback hold
//     (checkBreakerInvariants, and a draw always answers).
//
// P2 is measured: the degraded executor must be excluded in every run.
func TestPropertyTrafficEvidenceUnderRandomAgents(t *testing.T) {
	for run := range 10 {
		rng := rand.New(rand.NewPCG(uint64(run), 10))
		p := evidenceParams()
		p.DowntimeHThreshold = types.DefaultParams().DowntimeHThreshold
		p.EpochLength = 300
		p.HealthCbMaxCooldownBlocks = 40
		roles := []int{roleHealthy, roleNoisy, roleDark, roleDegraded}
		rng.Shuffle(len(roles), func(i, j int) { roles[i], roles[j] = roles[j], roles[i] })
		role := map[byte]int{}
		var target, dark, degraded byte
		for i, r := range roles {
			e := byte(i + 1)
			role[e] = r
			switch r {
			case roleHealthy:
				target = e
			case roleDark:
				dark = e
			case roleDegraded:
				degraded = e
			}
		}
		darkAt := int64(30 + rng.IntN(200))
		f := newBreakerFixture(t, withParams(p))
		addAgents(t, f, agentC)
		degradedExcluded := false
		for f.height < int64(p.EpochLength) {
			h := f.height
			for _, agent := range honestAgents {
				for range 1 + rng.IntN(2) {
					resp, err := f.draw("m", rng.Uint64())
					require.NoError(t, err, "fallback: a draw always answers")
					e := addrByte(t, resp.Executor.Address)
					fails := false
					switch role[e] {
					case roleNoisy:
						fails = rng.IntN(10_000) < 325
					case roleDark:
						fails = h >= darkAt
					case roleDegraded:
						fails = rng.IntN(100) < 40
					}
					id := f.newID()
					if err := f.startBy(agent, id, e); err != nil {
						// Its own probe of e expired: another agent must probe.
						if !errors.Is(err, types.ErrProbeTaken) {
							require.ErrorIs(t, err, types.ErrExecutorNotRoutable, "honest agent refused: %v", err)
						}
						continue
					}
					if !fails {
						require.NoError(t, f.finish(e, id))
					}
				}
			}
			for range rng.IntN(4) {
				if err := f.startBy(griefer, f.newID(), target); err != nil && !errors.Is(err, types.ErrAgentStopped) {
					require.ErrorIs(t, err, types.ErrExecutorNotRoutable)
				}
			}
			for e := byte(1); e <= 4; e++ {
				f.attest(e, e == dark && h >= darkAt)
			}
			f.next()
			checkBreakerInvariants(t, f, p)

			th := f.health(target)
			tp := f.participant(target)
			require.NotEqual(t, types.HEALTH_STATE_EXCLUDED, th.State, "run %d height %d: P1 target excluded", run, f.height)
			require.Equal(t, types.PARTICIPANT_STATUS_ACTIVE, tp.Status, "run %d: P1 target inactive", run)
			require.Zero(t, tp.CurrentEpochStats.MissedRequests, "run %d: P1 a griefer's miss counted", run)
			for _, a := range honestAgents {
				require.Zero(t, f.standing(a).Agent.Standing.StoppedHeight, "run %d height %d: P3 honest agent %x stopped", run, f.height, a)
			}
			if f.height == darkAt+3 {
				dh := f.health(dark)
				require.True(t, dh.State != types.HEALTH_STATE_HEALTHY || dh.CapRefusals > 0,
					"run %d: P4 dark at %d, not excluded (nor capped) by %d", run, darkAt, f.height)
			}
			degradedExcluded = degradedExcluded || f.health(degraded).State != types.HEALTH_STATE_HEALTHY
		}
		require.True(t, degradedExcluded, "run %d: P2 the degraded executor was never excluded", run)
		require.NotZero(t, f.standing(griefer).Agent.Standing.StoppedHeight, "run %d: P3 the griefer was never stopped", run)
	}
}

// addrByte maps a fixture address back to its byte.
func addrByte(t *testing.T, address string) byte {
	t.Helper()
	for i := byte(1); i <= 8; i++ {
		if bech(i) == address {
			return i
		}
	}
	require.FailNow(t, "unknown executor", address)
	return 0
}
