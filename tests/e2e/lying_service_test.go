package e2e_test

import (
	"os"
	"strings"
	"testing"
	"time"

	ln "github.com/inferenced/inferenced/tests/internal/localnet"
)

// serviceLieBlocks is how long each service lie is watched: the service
// trip rule (4 misses in a row, or more than half of 8) would exclude an
// executor within 4 to 5 blocks if the lie moved its attested rate; 10 blocks is
// twice that.
const serviceLieBlocks = 10

// serviceLie is what one service lie did, for the figures.
type serviceLie struct {
	mode, target                 string // target: the executor the figures follow
	liarReport, attested         string // on target, in one bundle
	from, to                     int64  // the blocks watched
	bundles                      int    // blocks of (from, to] carrying a health bundle
	left                         string // healthy executors that left HEALTHY
	blockTime                    time.Duration
	degradedAt, excludedAt, back int64 // service-zero: the degraded executor's timeline
	evidence, restoredBy         string
	signs                        liarSigns // the liar in the commits of (from, to]
}

// serviceLies runs the liar (validator 3, following modeFile) through the
// lies about service, with honest liveness verdicts: every executor at
// 100%, one executor at 100%, a service field that does not decode, then
// every executor at 0% while exec1 fails half its inferences (health
// endpoint up). The first three must exclude no one; the last must not
// keep exec1 in: the canaries of the three honest validators exclude it
// on service evidence, and restore it once fixed.
func serviceLies(t *testing.T, n *ln.Net, modeFile string) []serviceLie {
	t.Helper()
	liar := n.ValidatorAddr(3)
	watch := func(r *serviceLie) {
		from := n.Height()
		n.WaitHeight(from+serviceLieBlocks, time.Minute)
		r.from, r.to = from, n.Height()
		for h := from + 1; h <= r.to; h++ {
			if n.HasBundle(h) {
				r.bundles++
			}
			for _, ev := range n.AllTransitionEvents(h) {
				if ev["to"] != ln.Healthy {
					r.left += ev["executor"] + " (" + ln.Short(ev["to"]) + " at " + ev["height"] + ") "
				}
			}
		}
		r.blockTime = n.BlockTimes(from, r.to)
	}
	read := func(r *serviceLie, h int64) {
		v, err := n.Service(h)
		if err != nil {
			t.Fatal(err)
		}
		r.liarReport, r.attested = v.VoteOn(liar, r.target), v.Rate(r.target)
	}
	setMode := func(mode string) {
		if err := os.WriteFile(modeFile, []byte(mode), 0o600); err != nil {
			t.Fatal(err)
		}
		n.WaitHeight(n.Height()+3, time.Minute) // the liar has read its mode
	}
	var out []serviceLie
	first := n.GroupMember(0)
	for _, c := range []struct{ mode, target string }{
		{"service-max", n.ExecutorAddr(2)},
		{"service-target", first}, // the first member of the group
		{"service-garbage", n.ExecutorAddr(2)},
	} {
		setMode(c.mode)
		r := serviceLie{mode: c.mode, target: c.target}
		watch(&r)
		read(&r, r.to)
		r.signs = readLiarSigns(t, n, liar, r.from, r.to, refusedLies[c.mode])
		out = append(out, r)
	}

	// service-zero: exec1 degrades while the liar says it serves.
	setMode("service-zero")
	r := serviceLie{mode: "service-zero", target: n.ExecutorAddr(1)}
	r.from = n.Height()
	o := n.Outage(1).WatchOthers().Fail(50).AwaitExclusion(0, 2*time.Minute).Evidence()
	read(&r, o.ExcludedAt)
	o.Fail(0).AwaitRecovery(2 * time.Minute)
	r.to = n.Height()
	for h := r.from + 1; h <= r.to; h++ {
		if n.HasBundle(h) {
			r.bundles++
		}
	}
	r.left, r.blockTime = o.Others(), n.BlockTimes(r.from, r.to)
	r.degradedAt, r.excludedAt, r.back = o.DarkAt, o.ExcludedAt, o.HealthyAt
	r.evidence, r.restoredBy = o.Kind, o.RestoredBy
	r.signs = readLiarSigns(t, n, liar, r.from, r.to, false)
	return append(out, r)
}

// checkServiceLies prints the service lies' figures and asserts them.
func checkServiceLies(t *testing.T, lies []serviceLie, normal time.Duration) {
	t.Helper()
	t.Logf("lies about service (liveness verdicts honest), %d blocks each, or until exec1 is back:", serviceLieBlocks)
	t.Logf("  %-15s %-10s %-14s %-9s %8s %10s %-22s %s", "mode", "on", "liar's report", "attested", "bundles", "block time",
		"healthy executors out", liarSignsHeader)
	for _, r := range lies {
		left := r.left
		if left == "" {
			left = "none"
		}
		t.Logf("  %-15s %-10s %-14s %-9s %4d/%-3d %10s %-22s %s", r.mode, short(r.target), r.liarReport, r.attested,
			r.bundles, r.to-r.from, r.blockTime.Round(time.Millisecond), left, r.signs)
		r.signs.check(t, r.mode, refusedLies[r.mode])
		if r.left != "" {
			t.Errorf("%s: healthy executors left HEALTHY: %s", r.mode, r.left)
		}
		if r.bundles != int(r.to-r.from) {
			t.Errorf("%s: %d of blocks %d..%d carry a health bundle", r.mode, r.bundles, r.from+1, r.to)
		}
		if r.blockTime > 2*normal+200*time.Millisecond {
			t.Errorf("%s: blocks every %s, normally %s: the chain slowed down", r.mode, r.blockTime, normal)
		}
		switch r.mode {
		case "service-max", "service-target":
			if r.liarReport != "100%" {
				t.Errorf("%s: the liar's report in the bundle is %s, want 100%%: the lie did not reach the bundle", r.mode, r.liarReport)
			}
		case "service-garbage":
			if r.liarReport == "100%" || strings.HasSuffix(r.liarReport, "%") {
				t.Errorf("%s: the liar's vote carries reports (%s): its extension should have been rejected", r.mode, r.liarReport)
			}
		case "service-zero":
			t.Logf("  service-zero: exec1 fails 50%% from block %d: EXCLUDED at %d on %s evidence (+%d blocks; in that bundle the liar says %s, the median %s); fixed, HEALTHY at %d by %s",
				r.degradedAt, r.excludedAt, ln.Short(r.evidence), r.excludedAt-r.degradedAt, r.liarReport, r.attested, r.back, ln.Short(r.restoredBy))
			if r.evidence != ln.Service {
				t.Errorf("service-zero: exec1 excluded on %s evidence, want service", r.evidence)
			}
			if r.liarReport != "0%" {
				t.Errorf("service-zero: the liar's report on exec1 is %s, want 0%%", r.liarReport)
			}
			if r.restoredBy != ln.ServiceOK {
				t.Errorf("service-zero: exec1 restored by %s, want the canaries (service ok)", r.restoredBy)
			}
		}
	}
}

// short is an address's last 6 characters, for the tables.
func short(addr string) string {
	if len(addr) <= 6 {
		return addr
	}
	return "…" + addr[len(addr)-6:]
}
