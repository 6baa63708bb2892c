package localnet_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	ln "github.com/inferenced/inferenced/tests/internal/localnet"
)

// TestLocalnetBreakerTimeline runs the load driver against four executors,
// takes one dark, and follows it through the breaker: excluded on its
// traffic misses, back up, promoted to PROBE after the cooldown, its probe
// answered, HEALTHY again. It prints the timeline in blocks.
//
// Vote extensions are off (VE_ENABLE_HEIGHT=0), so the chain runs on
// traffic samples alone; the attested path is covered by tests/e2e
// (TestIdleExecutorExcludedByAttestationAlone and the others).
//
// The SPRT threshold is raised: with a handful of finishes before going
// dark, the misses of requests already in flight would otherwise make the
// SPRT take the executor out for the rest of the epoch, as it should, and
// there would be no recovery to show.
func TestLocalnetBreakerTimeline(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a 4-validator network; run without -short")
	}
	n := ln.Start(t, 5300, "NUM_VALIDATORS=4", "NUM_EXECUTORS=4", "EXPIRATION_BLOCKS=3", "BLOCK_TIME=500ms",
		"EPOCH_LENGTH=1000", "CB_INITIAL_COOLDOWN=8", "CB_MAX_COOLDOWN=64", "DOWNTIME_H_THRESHOLD=50", "VE_ENABLE_HEIGHT=0")
	dark := n.KeyAddress("exec1")
	events := filepath.Join(n.Home, "breaker-events.jsonl")

	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	var out bytes.Buffer
	load := exec.CommandContext(ctx, filepath.Join(n.Bins, "loadgen"), "-grpc", n.GRPCAddr(), "-keyring-dir", n.KeysDir,
		"-rate", "4", "-run", "cb", "-events", events, "-quiet", "-exec-timeout", "1s")
	load.Stdout, load.Stderr = &out, &out
	if err := load.Start(); err != nil {
		t.Fatal(err)
	}
	loadDone := make(chan error, 1)
	go func() { loadDone <- load.Wait() }()

	begin := n.Height()
	n.WaitHeight(begin+4, time.Minute) // traffic is flowing
	darkAt := n.Height()
	n.Control(1, "/control/dark?mode=refuse")

	var excluded, probe, healthy ln.HealthJSON
	var upAt int64
	deadline := time.Now().Add(3 * time.Minute)
	for healthy.State == "" {
		if time.Now().After(deadline) {
			last, _ := n.Health(dark)
			t.Logf("participant: %+v", n.Participant(dark))
			_ = load.Process.Signal(os.Interrupt)
			<-loadDone
			t.Fatalf("no recovery in 3 minutes: excluded %+v probe %+v now %+v\nloadgen:\n%s", excluded, probe, last, out.String())
		}
		h, err := n.Health(dark)
		if err != nil {
			t.Logf("health: %v", err)
		}
		switch {
		case h.State == "HEALTH_STATE_EXCLUDED" && excluded.State == "":
			excluded = h
			n.Control(1, "/control/up")
			upAt = n.Height()
		case h.State == "HEALTH_STATE_PROBE" && probe.State == "":
			probe = h
		case h.State == "HEALTH_STATE_HEALTHY" && excluded.State != "":
			healthy = h
		}
		time.Sleep(150 * time.Millisecond)
	}
	if err := load.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	if err := <-loadDone; err != nil {
		t.Fatalf("loadgen: %v\n%s", err, out.String())
	}

	E, P, H := ln.Atoi(t, excluded.ExcludedAt), ln.Atoi(t, probe.SinceHeight), ln.Atoi(t, healthy.SinceHeight)
	if probe.State == "" {
		P = 0 // promoted and restored between two polls
	}
	var beforeExcl, duringExcl, probes, probeAnswered int
	var probeHeight int64
	f, err := os.Open(events)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	scanner := bufio.NewScanner(f)
	for scanner.Scan() {
		var ev struct {
			Height   int64  `json:"height"`
			ID       string `json:"inference_id"`
			Executor string `json:"executor"`
			Outcome  string `json:"outcome"`
			Probe    bool   `json:"probe"`
		}
		if err := json.Unmarshal(scanner.Bytes(), &ev); err != nil {
			t.Fatal(err)
		}
		if ev.Executor != dark || ev.Height < darkAt {
			continue
		}
		switch {
		case ev.Probe:
			probes++
			if ev.Outcome == "answered" && probeHeight == 0 {
				probeAnswered++
				probeHeight = ev.Height
			}
		case ev.Height < E:
			beforeExcl++
		case ev.Height < H:
			duringExcl++ // a request routed while excluded or probing
		}
	}
	t.Logf("loadgen:\n%s", out.String())
	t.Logf("timeline (blocks), executor exec1 %s:", dark)
	t.Logf("  %5d  goes dark (last committed block when its endpoint started refusing)", darkAt)
	ev := n.TransitionEvent(E, dark)
	t.Logf("  %5d  EXCLUDED, reason %s, %s of the last %s traffic samples missed: +%d blocks after dark",
		E, excluded.Reason, ev["misses"], ev["samples"], E-darkAt)
	t.Logf("  %5d  endpoint back up", upAt)
	t.Logf("  %5d  PROBE after the %s-block cooldown (eligible at %s)", P, excluded.CooldownBlocks, excluded.EligibleHeight)
	t.Logf("  %5d  probe request routed (query height)", probeHeight)
	t.Logf("  %5d  HEALTHY, reason %s: +%d blocks after PROBE, +%d after dark", H, healthy.Reason, H-P, H-darkAt)
	t.Logf("  requests routed to exec1 after it went dark: %d before exclusion, %d non-probe while out, %d offered as probe"+
		" (a probe offer made before the first probe's start landed is refused on chain: one slot)",
		beforeExcl, duringExcl, probes)

	if ev["to"] != "HEALTH_STATE_EXCLUDED" || ev["kind"] != "SAMPLE_KIND_TRAFFIC" {
		t.Errorf("exclusion event at %d: %v", E, ev)
	}
	if healthy.Reason != "HEALTH_REASON_PROBE_SUCCEEDED" {
		t.Errorf("restored by %s, want a probe success", healthy.Reason)
	}
	if E-darkAt > 20 {
		t.Errorf("excluded %d blocks after going dark", E-darkAt)
	}
	if P != 0 && P < E+ln.Atoi(t, excluded.CooldownBlocks) {
		t.Errorf("PROBE at %d before the cooldown ended at %s", P, excluded.EligibleHeight)
	}
	if duringExcl != 0 {
		t.Errorf("%d non-probe requests were routed to the excluded executor", duringExcl)
	}
	if probeAnswered != 1 {
		t.Errorf("%d answered probes, want 1", probeAnswered)
	}
}
