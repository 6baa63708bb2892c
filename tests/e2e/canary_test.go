package e2e_test

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	ln "github.com/inferenced/inferenced/tests/internal/localnet"
)

// maxBlocksToServiceExclusion is the design's budget from an executor
// starting to fail 28% of its inferences, health endpoint up, to its
// exclusion with no client traffic (health-attestation.md, section 5).
const maxBlocksToServiceExclusion = 60

// Scenarios 11 and 12, service attestation, on one network with the
// script's canaries (a canary every second per executor and validator,
// bursts every 200 ms, windows of 16: scripts/localnet-init.sh):
//
//	(a) with no client traffic at all, an executor failing 28% of its
//	    inferences (health endpoint up) is excluded on service evidence,
//	    the canaries' alone; fixed, it is restored by them (SERVICE_OK)
//	    after its cooldown, with agents routing all along and no probe
//	    inference ever offered to them;
//	(c) two colluding registered agents start inferences on a healthy
//	    executor and never forward them while three honest agents route:
//	    the target is out of everyone's routing at most once (one initial
//	    cooldown), then each trip is scoped to the colluders: honest starts
//	    on it are accepted, the colluders' refused, naming the scope.
func TestCanariesExcludeTheDegradedAndScopeColluders(t *testing.T) {
	cfg := ln.DefaultConfig()
	cfg.PortOffset = 5000
	// agent0..2 are the honest load driver's, agent3 and agent4 collude.
	cfg.Agents = 5
	// Colluders pay for every miss they make count (the agents' miss
	// allowance): at real volume their own real traffic earns them the
	// allowance these misses take; here a larger allowance stands for it,
	// so they keep attacking for the whole scenario.
	cfg.AgentMissAllowance = 200
	n := start(t, cfg)
	honestAgents := ln.AsAgents(ln.AgentKey(0), ln.AgentKey(1), ln.AgentKey(2))

	t.Run("a degraded executor excluded and restored by canaries alone", func(t *testing.T) {
		bad := n.ExecutorAddr(1)
		n.WaitHeight(12, time.Minute) // every validator has fresh canary outcomes
		o := n.Outage(1).WatchOthers().Fail(28).AwaitExclusion(0, 2*time.Minute).Evidence()
		// Agents route from the fix on: none may probe it.
		load := n.StartLoad(4, "honest-a", 4*time.Minute, honestAgents)
		fixAt := n.Height()
		o.Fail(0).AwaitRecovery(2 * time.Minute)
		if err := load.Stop(); err != nil {
			t.Logf("load driver: %v", err)
		}
		probes, drawn := 0, 0
		for h := o.ExcludedAt; h <= o.HealthyAt; h++ {
			for _, ev := range n.Events(h, ln.ProbeStartedEvent) {
				if ev["executor"] == bad {
					probes++
				}
			}
		}
		for _, ev := range load.Events() {
			if ev.Executor == bad && (ev.Probe || ev.Height < o.HealthyAt) {
				drawn++
			}
		}
		t.Logf("exec1 %s fails 28%% of inferences from block %d, health endpoint up, no client traffic:", bad, o.DarkAt)
		for h := o.DarkAt + 1; h <= o.ExcludedAt; h++ {
			t.Logf("  %5d  %s", h, serviceLine(t, n, h, bad))
		}
		ev := n.TransitionEvent(o.ExcludedAt, bad)
		t.Logf("  EXCLUDED at %d on %s evidence (%s of %s service samples missed), cooldown %d: +%d blocks from the fault",
			o.ExcludedAt, ln.Short(o.Kind), ev["misses"], ev["samples"], o.Cooldown, o.ExcludedAt-o.DarkAt)
		t.Logf("  fixed at %d (load driver routing from then on); HEALTHY at %d by %s: +%d blocks from the fix, %d after the exclusion",
			fixAt, o.HealthyAt, ln.Short(o.RestoredBy), o.HealthyAt-fixAt, o.HealthyAt-o.ExcludedAt)
		t.Logf("  probe inferences started on it: %d; draws of it before HEALTHY: %d; other executors out: %q", probes, drawn, o.Others())
		if o.Kind != ln.Service {
			t.Errorf("excluded on %s evidence, want service (no traffic ran)", o.Kind)
		}
		if got := o.ExcludedAt - o.DarkAt; got > maxBlocksToServiceExclusion {
			t.Errorf("excluded %d blocks after the fault, want <= %d", got, maxBlocksToServiceExclusion)
		}
		if o.RestoredBy != ln.ServiceOK {
			t.Errorf("restored by %s, want the canaries' service ok", o.RestoredBy)
		}
		if o.HealthyAt < o.ExcludedAt+o.Cooldown {
			t.Errorf("restored at %d, before its cooldown from %d ended", o.HealthyAt, o.ExcludedAt)
		}
		if probes != 0 || drawn != 0 {
			t.Errorf("%d probe inferences started and %d draws of it while out: excluded on service, it offers agents no probe", probes, drawn)
		}
		if o.Others() != "" {
			t.Errorf("healthy executors excluded: %s", o.Others())
		}
	})

	t.Run("c colluding agents keep a serving executor out once then only themselves", func(t *testing.T) {
		colluding(t, n, honestAgents)
	})
}

// serviceLine is block h's service attestation about executor: the
// attested rate and each validator's report, then the breaker's sample.
func serviceLine(t *testing.T, n *ln.Net, h int64, executor string) string {
	t.Helper()
	v, err := n.Service(h)
	if err != nil {
		return err.Error()
	}
	var votes []string
	for i := range 4 {
		votes = append(votes, v.VoteOn(n.ValidatorAddr(i), executor))
	}
	return fmt.Sprintf("attested %-7s reports %s", v.Rate(executor), strings.Join(votes, " "))
}

// colluding is scenario (c): the colluders agent3 and agent4 name exec2 in
// two starts a block and never forward them, while the honest load driver
// runs, until two scoped trips have been seen (at most 150 blocks).
func colluding(t *testing.T, n *ln.Net, honestAgents ln.LoadOption) {
	target := n.ExecutorAddr(2)
	colluders := map[string]string{n.AgentAddr(3): ln.AgentKey(3), n.AgentAddr(4): ln.AgentKey(4)}
	honest := n.StartLoad(4, "honest-c", 6*time.Minute, honestAgents)
	n.WaitHeight(n.Height()+4, time.Minute)
	from := n.Height()
	attack := n.StartGrief(target, 2, 0, "collude", 5*time.Minute, ln.AsAgents(ln.AgentKey(3), ln.AgentKey(4)))

	type scope struct {
		at, until int64
		agents    []string
	}
	var scopes []scope
	var out []string // exclusions: "E..H"
	exclusions, outBlocks := 0, int64(0)
	var excludedAt int64
	h := from
	for deadline := from + 150; len(scopes) < 2 && h < deadline; {
		// Read each block once its successor is committed: node 0's
		// results for its latest block may not be stored yet.
		n.WaitHeight(h+2, time.Minute)
		for top := n.Height() - 1; h < top; {
			h++
			for _, ev := range n.TransitionEvents(h, target) {
				switch {
				case ev["to"] == ln.Excluded:
					exclusions++
					excludedAt = h
				case ev["to"] == ln.Healthy && excludedAt > 0:
					outBlocks += h - excludedAt
					out = append(out, fmt.Sprintf("%d..%d (%d blocks, back by %s)", excludedAt, h, h-excludedAt, ln.Short(ev["reason"])))
					excludedAt = 0
				}
			}
			for _, ev := range n.Events(h, ln.ScopedEvent) {
				if ev["executor"] != target {
					continue
				}
				agents, err := ln.ListAttr(ev["transfer_agents"])
				if err != nil {
					t.Fatalf("scoped event at %d: agents %q: %v", h, ev["transfer_agents"], err)
				}
				scopes = append(scopes, scope{at: h, until: ln.Atoi(t, ev["scoped_until"]), agents: agents})
			}
		}
	}
	if err := attack.Stop(); err != nil {
		t.Logf("colluders: %v", err)
	}
	to := n.Height()
	n.WaitHeight(to+6, time.Minute) // the last starts expire
	if err := honest.Stop(); err != nil {
		t.Logf("load driver: %v", err)
	}
	health, err := n.Health(target)
	if err != nil {
		t.Fatal(err)
	}
	status := n.Participant(target).Status

	inScope := func(height int64) bool {
		for _, s := range scopes {
			if height >= s.at && height < s.until {
				return true
			}
		}
		return false
	}
	started, refusedScope, refusedInScope := 0, 0, 0
	other := map[string]int{} // the other refusals' reasons
	for _, ev := range attack.Events() {
		if strings.HasPrefix(ev.Reason, "broadcast:") {
			// Not the chain's answer: a start the stop cut short in the
			// driver (context canceled), which it records as refused.
			other["(cut short by the driver's stop) broadcast"]++
			continue
		}
		switch {
		case ev.Outcome == ln.GriefStarted:
			started++
		case strings.Contains(ev.Reason, "is out for transfer agent "+n.AgentAddr(3)) ||
			strings.Contains(ev.Reason, "is out for transfer agent "+n.AgentAddr(4)):
			refusedScope++
		default:
			reason, _, _ := strings.Cut(strings.ReplaceAll(ev.Reason, target, "exec2"), ":")
			other[reason]++
		}
		if ev.Outcome == ln.GriefRefused && inScope(ev.Height) && !strings.Contains(ev.Reason, "is out for transfer agent") {
			refusedInScope++ // refused in a scope for another reason
		}
	}
	honestOn, honestRefused := 0, 0
	for _, ev := range honest.Events() {
		if ev.Executor != target || !inScope(ev.Height) {
			continue
		}
		if ev.Outcome == "start_failed" {
			honestRefused++
		} else {
			honestOn++
		}
	}

	t.Logf("colluders %s and %s start 2 inferences a block on exec2 %s from block %d and never forward them; honest agents route 4 a block",
		ln.AgentKey(3), ln.AgentKey(4), target, from)
	t.Logf("  out of everyone's routing: %d exclusion(s), %d blocks: %s", exclusions, outBlocks, strings.Join(out, ", "))
	for _, s := range scopes {
		var names []string
		for _, a := range s.agents {
			name, ok := colluders[a]
			if !ok {
				name = "HONEST " + a
			}
			names = append(names, name)
		}
		t.Logf("  scoped at %d until %d (%d blocks): %s", s.at, s.until, s.until-s.at, strings.Join(names, ", "))
	}
	t.Logf("  colluders' starts on it, blocks %d..%d: %d started, %d refused naming their scope", from, to, started, refusedScope)
	for _, reason := range slices.Sorted(maps.Keys(other)) {
		t.Logf("    refused x%d: %s", other[reason], reason)
	}
	t.Logf("  honest starts on it during the scopes: %d accepted, %d refused", honestOn, honestRefused)
	t.Logf("  exec2 at the end: %s, %s; scoped agents now %d", ln.Short(health.State), ln.Short(status), len(health.ScopedAgents))

	if exclusions > 1 || outBlocks > cfgInitialCooldown+1 {
		t.Errorf("out of everyone's routing %d times for %d blocks, want at most once for one initial cooldown (%d)", exclusions, outBlocks, cfgInitialCooldown)
	}
	if len(scopes) == 0 {
		t.Fatalf("no scoped trip in blocks %d..%d", from, to)
	}
	for _, s := range scopes {
		for _, a := range s.agents {
			if _, ok := colluders[a]; ok {
				continue
			}
			// An honest agent's own miss on the target (a stall of this
			// machine) may count beside the colluders' and scope it too:
			// only an agent without one is wrongly named.
			if own := expiredOn(t, n, honest, a, target, s.at); own > 0 {
				t.Logf("  scoped trip at %d names honest %s, which had %d expired inference(s) of its own on exec2", s.at, a, own)
				continue
			}
			t.Errorf("scoped trip at %d names %s, neither a colluder nor an agent with a miss of its own on exec2", s.at, a)
		}
	}
	if refusedScope == 0 || refusedInScope > 0 {
		t.Errorf("colluders' starts: %d refused naming their scope, %d refused for another reason within a scope", refusedScope, refusedInScope)
	}
	if honestOn == 0 || honestRefused > 0 {
		t.Errorf("honest starts on the target within the scopes: %d accepted, %d refused", honestOn, honestRefused)
	}
	if health.State != ln.Healthy || status != ln.Active {
		t.Errorf("exec2 ends %s and %s, want HEALTHY and ACTIVE", health.State, status)
	}
}

// expiredOn counts the inferences the honest load driver (agent0..2)
// started as the agent at address agent on executor before block before
// that expired on chain.
func expiredOn(t *testing.T, n *ln.Net, load *ln.Load, agent, executor string, before int64) int {
	t.Helper()
	name := "" // the agent's key name, as the load driver's events give it
	for k := range 3 {
		if n.AgentAddr(k) == agent {
			name = ln.AgentKey(k)
		}
	}
	expired := 0
	for _, ev := range load.Events() {
		if name == "" || ev.Agent != name || ev.Executor != executor || ev.Height >= before || ev.Outcome == "start_failed" {
			continue
		}
		if n.Inference(agent, ev.ID).Status == ln.Expired {
			expired++
		}
	}
	return expired
}

// cfgInitialCooldown is ln.DefaultConfig's first cooldown, which the
// collusion scenario keeps.
var cfgInitialCooldown = ln.DefaultConfig().InitialCooldown
