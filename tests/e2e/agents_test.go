package e2e_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	ln "github.com/inferenced/inferenced/tests/internal/localnet"
)

// Scenarios 9-11, transfer agents, on one network, in this order:
//
//	(c) an account that is not a registered transfer agent cannot start;
//	(b) the griefer takes the probe slot of an executor coming back from a
//	    real outage (its inferences failed) and lets the probe expire: the
//	    executor is not re-excluded, the griefer may not probe it again, and
//	    an honest agent's probe restores it;
//	(a) the griefer sends 100 starts over 50 blocks to a healthy executor
//	    while the load driver's honest agents run: the executor stays
//	    HEALTHY and ACTIVE, the griefer is refused once its charged misses
//	    pass its allowance, the honest agents' standing is untouched.
//
// No validator sends canaries here: (b) is the probe slot that agents
// hold after a traffic exclusion, which canaries would take over (they
// see the fixed executor serving and restore it themselves). Agents
// against an executor the canaries see serving: scenario 12.
func TestTransferAgentsAgainstGriefing(t *testing.T) {
	cfg := ln.DefaultConfig()
	cfg.PortOffset = 5400
	cfg.ExpirationBlocks, cfg.SPRTThreshold = 3, 50
	cfg.Canary.Off = true
	n := start(t, cfg)
	griefer := n.KeyAddress(ln.GrieferKey)

	t.Run("c unregistered account is refused", func(t *testing.T) {
		r := n.TxResult(ln.OutsiderKey, "inference", "start-inference", "outsider-1", ln.Model, n.ExecutorAddr(2))
		t.Logf("outsider's start: code %d, gas used %d: %s", r.Code, r.GasUsed, r.Log)
		if r.Code == 0 || !strings.Contains(r.Log, "not a registered transfer agent") {
			t.Fatalf("outsider's start: code %d %q, want a refusal naming the registry", r.Code, r.Log)
		}
		// One griefing attempt: a registered agent's start that it will
		// never forward.
		g := n.TxResult(ln.GrieferKey, "inference", "start-inference", "grief-gas-1", ln.Model, n.ExecutorAddr(3))
		t.Logf("one griefing start: code %d, gas used %d (the griefer's bond: %s)", g.Code, g.GasUsed, bondOf(t, n, griefer))
		if g.Code != 0 {
			t.Fatalf("the griefer's start was refused: %s", g.Log)
		}
	})

	t.Run("b griefer letting the probe expire does not re-exclude", func(t *testing.T) {
		o := n.Outage(1)
		load := n.StartLoad(4, "honest-b", 4*time.Minute)
		o.Fail(100).AwaitExclusion(1, 3*time.Minute).Evidence()
		o.Fail(0) // the executor is fixed while still EXCLUDED
		if err := load.Stop(); err != nil {
			t.Logf("load driver: %v", err)
		}
		grief := n.StartGrief(o.Addr, 1, 0, "grief-b", 4*time.Minute)
		taken := n.WaitHealth(o.Addr, "the griefer's probe", 2*time.Minute, func(h ln.HealthJSON) bool {
			return h.State == ln.Probe && h.ProbeID != ""
		})
		released := n.WaitHealth(o.Addr, "the probe slot released", time.Minute, func(h ln.HealthJSON) bool {
			return h.State == ln.Probe && h.ProbeID == "" && h.HeldMisses > 0
		})
		n.WaitHeight(n.Height()+3, time.Minute) // the griefer keeps trying
		if err := grief.Stop(); err != nil {
			t.Logf("griefer: %v", err)
		}
		refusedProbe := 0
		for _, b := range grief.GriefBlocks() {
			for reason, c := range b.Reasons {
				if strings.Contains(reason, "another agent must probe it") {
					refusedProbe += c
				}
			}
		}
		back := n.StartLoad(4, "honest-b2", 4*time.Minute)
		o.AwaitRecovery(2 * time.Minute)
		if err := back.Stop(); err != nil {
			t.Logf("load driver: %v", err)
		}
		// A stopped driver leaves a few started inferences unforwarded: let
		// them expire before (a), so that none is in flight beside its
		// griefer (misses in flight together pair, one for one).
		n.WaitHeight(n.Height()+int64(cfg.ExpirationBlocks)+3, time.Minute)
		st, err := n.TransferAgent(griefer)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("exec1 failing all inferences from block %d: EXCLUDED at %d on %s evidence (cooldown %d)", o.DarkAt, o.ExcludedAt, o.Kind, o.Cooldown)
		t.Logf("  griefer's probe %s taken at PROBE since %s; slot released by block %s with %d held miss",
			taken.ProbeID, taken.SinceHeight, released.SinceHeight, released.HeldMisses)
		t.Logf("  griefer's further starts refused as a second probe: %d; HEALTHY at %d by %s, exclusions %d",
			refusedProbe, o.HealthyAt, o.RestoredBy, o.Recovery.Exclusions)
		t.Logf("  griefer's standing: charged %d, allowance %d", st.Agent.Standing.ChargedMisses, st.MissAllowance)
		if o.Kind != ln.Traffic {
			t.Errorf("excluded on %s evidence, want traffic", o.Kind)
		}
		if !strings.HasPrefix(taken.ProbeID, "grief-b") {
			t.Errorf("probe %q was not the griefer's", taken.ProbeID)
		}
		if refusedProbe == 0 {
			t.Errorf("the griefer was never refused a second probe")
		}
		if o.RestoredBy != ln.ProbeSucceeded || o.Recovery.Exclusions != 1 {
			t.Errorf("restored by %s after %d exclusions, want a probe success after 1 (never re-excluded)", o.RestoredBy, o.Recovery.Exclusions)
		}
		if st.Agent.Standing.ChargedMisses == 0 {
			t.Errorf("the expired probe was not charged to the griefer")
		}
	})

	t.Run("a one griefer cannot exclude a healthy executor", func(t *testing.T) {
		target := n.ExecutorAddr(2)
		honest := make([]ln.TransferAgentView, len(n.AgentKeys()))
		for k := range honest {
			v, err := n.TransferAgent(n.AgentAddr(k))
			if err != nil {
				t.Fatal(err)
			}
			honest[k] = v
		}
		missedBefore := ln.Atoi(t, n.Participant(target).Stats.MissedRequests)
		load := n.StartLoad(4, "honest-a", 5*time.Minute)
		from := n.Height()
		grief := n.StartGrief(target, 2, 50, "grief-a", 4*time.Minute)
		var timeline []string
		for range 12 {
			n.WaitHeight(n.Height()+5, time.Minute)
			if v, err := n.TransferAgent(griefer); err == nil {
				timeline = append(timeline, fmt.Sprintf("%d: charged %d/%d%s", n.Height(), v.Agent.Standing.ChargedMisses,
					v.MissAllowance, map[bool]string{true: "", false: " STOPPED"}[v.MayStart]))
			}
		}
		grief.Wait()
		n.WaitHeight(n.Height()+int64(cfg.ExpirationBlocks)+3, time.Minute)
		if err := load.Stop(); err != nil {
			t.Logf("load driver: %v", err)
		}
		// Everything the honest agents started has finished or expired.
		n.WaitHeight(n.Height()+int64(cfg.ExpirationBlocks)+3, time.Minute)
		to := n.Height()
		started, refused, stopped := 0, 0, 0
		var firstRefusal int64
		for _, b := range grief.GriefBlocks() {
			started += b.Started
			refused += b.Refused
			for reason, c := range b.Reasons {
				if strings.Contains(reason, "stopped for the rest of the epoch") {
					stopped += c
					if firstRefusal == 0 {
						firstRefusal = b.Height
					}
				}
			}
		}
		h, err := n.Health(target)
		if err != nil {
			t.Fatal(err)
		}
		p := n.Participant(target)
		st, err := n.TransferAgent(griefer)
		if err != nil {
			t.Fatal(err)
		}
		excluded := 0
		for b := from; b <= to; b++ {
			for _, ev := range n.TransitionEvents(b, target) {
				if ev["to"] == ln.Excluded {
					excluded++
				}
			}
		}
		t.Logf("griefer → exec2 %s, blocks %d..%d: %d starts accepted, %d refused (%d as stopped, first at block %d)",
			target, from, to, started, refused, stopped, firstRefusal)
		t.Logf("  griefer's standing over time: %s", strings.Join(timeline, ", "))
		t.Logf("  griefer stopped at block %d with %d charged misses (allowance %d)",
			st.Agent.Standing.StoppedHeight, st.Agent.Standing.ChargedMisses, st.MissAllowance)
		t.Logf("  exec2: %s, %d exclusions in the window, %s, missed_requests %s, held misses now %d",
			h.State, excluded, p.Status, p.Stats.MissedRequests, h.HeldMisses)
		if started+refused != 100 {
			t.Errorf("griefer made %d attempts, want 100", started+refused)
		}
		if h.State != ln.Healthy || excluded != 0 {
			t.Errorf("exec2 %s with %d exclusions, want HEALTHY and none", h.State, excluded)
		}
		if !strings.HasSuffix(p.Status, "ACTIVE") || strings.HasSuffix(p.Status, "INACTIVE") {
			t.Errorf("exec2 is %s, want ACTIVE", p.Status)
		}
		// The griefer's misses count only one for one with honest misses in
		// flight beside them (a loaded 2-core machine makes the honest
		// driver miss now and then), and it adds no charge to an honest
		// agent: each one's charges grow by at most its own expired starts.
		ownMisses := 0
		for k, before := range honest {
			after, err := n.TransferAgent(n.AgentAddr(k))
			if err != nil {
				t.Fatal(err)
			}
			b, a := before.Agent.Standing, after.Agent.Standing
			expired := int(a.Starts-b.Starts) - int(a.Finished-b.Finished)
			ownMisses += expired
			t.Logf("  honest agent %d: %d starts, %d finished, %d expired; charged %d → %d", k,
				a.Starts-b.Starts, a.Finished-b.Finished, expired, b.ChargedMisses, a.ChargedMisses)
			if int(a.ChargedMisses-b.ChargedMisses) > expired || !after.MayStart {
				t.Errorf("honest agent %d: charged %d → %d with %d expired starts of its own, may start %v", k,
					b.ChargedMisses, a.ChargedMisses, expired, after.MayStart)
			}
		}
		counted := ln.Atoi(t, p.Stats.MissedRequests) - missedBefore
		t.Logf("  exec2: %d misses counted in the window, %d honest misses in all", counted, ownMisses)
		if counted > int64(2*ownMisses) {
			t.Errorf("exec2 had %d misses counted against %d honest misses: more than one for one", counted, ownMisses)
		}
	})
}

func bondOf(t *testing.T, n *ln.Net, addr string) string {
	t.Helper()
	v, err := n.TransferAgent(addr)
	if err != nil {
		t.Fatal(err)
	}
	return v.Agent.Bond.Amount + v.Agent.Bond.Denom
}
