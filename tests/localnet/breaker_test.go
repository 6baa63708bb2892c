package localnet_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

type healthJSON struct {
	State          string `json:"state"`
	Reason         string `json:"reason"`
	SinceHeight    string `json:"since_height"`
	ExcludedAt     string `json:"excluded_at"`
	EligibleHeight string `json:"eligible_height"`
	CooldownBlocks string `json:"cooldown_blocks"`
	TrafficSamples int    `json:"traffic_samples"`
	TrafficMisses  int    `json:"traffic_misses"`
	Exclusions     int    `json:"exclusions"`
	ProbeID        string `json:"probe_inference_id"`
}

var httpClient = &http.Client{Timeout: 3 * time.Second}

func (n *network) getJSON(url string, out any) error {
	res, err := httpClient.Get(url)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", url, res.Status)
	}
	return json.NewDecoder(res.Body).Decode(out)
}

// health reads an executor's breaker state over REST (node 0).
func (n *network) health(addr string) (healthJSON, error) {
	var res struct {
		Health healthJSON `json:"health"`
	}
	err := n.getJSON(fmt.Sprintf("http://127.0.0.1:%d/inferenced/inference/v1/executor_health/%s", 1317+n.offset, addr), &res)
	return res.Health, err
}

// height is node 0's latest committed height over RPC.
func (n *network) height() int64 {
	n.t.Helper()
	var st struct {
		Result struct {
			SyncInfo struct {
				Height string `json:"latest_block_height"`
			} `json:"sync_info"`
		} `json:"result"`
	}
	if err := n.getJSON(fmt.Sprintf("http://127.0.0.1:%d/status", 26657+n.offset), &st); err != nil {
		n.t.Fatalf("status: %v", err)
	}
	h, _ := strconv.ParseInt(st.Result.SyncInfo.Height, 10, 64)
	return h
}

// transitionEvent returns the attributes of the first breaker transition
// event for executor in the results of block height, or nil.
func (n *network) transitionEvent(height int64, executor string) map[string]string {
	n.t.Helper()
	if evs := n.transitionEvents(height, executor); len(evs) > 0 {
		return evs[0]
	}
	return nil
}

// transitionEvents returns the attributes of every breaker transition event
// for executor in the results of block height, in emission order.
func (n *network) transitionEvents(height int64, executor string) []map[string]string {
	n.t.Helper()
	var res struct {
		Result struct {
			Events []struct {
				Type       string `json:"type"`
				Attributes []struct {
					Key   string `json:"key"`
					Value string `json:"value"`
				} `json:"attributes"`
			} `json:"finalize_block_events"`
		} `json:"result"`
	}
	url := fmt.Sprintf("http://127.0.0.1:%d/block_results?height=%d", 26657+n.offset, height)
	if err := n.getJSON(url, &res); err != nil {
		n.t.Fatalf("block results: %v", err)
	}
	var out []map[string]string
	for _, ev := range res.Result.Events {
		if ev.Type != "inferenced.inference.v1.EventExecutorHealthChanged" {
			continue
		}
		attrs := map[string]string{}
		for _, a := range ev.Attributes {
			attrs[a.Key] = strings.Trim(a.Value, `"`)
		}
		if attrs["executor"] == executor {
			out = append(out, attrs)
		}
	}
	return out
}

func (n *network) control(j int, path string) {
	n.t.Helper()
	res, err := httpClient.Post(n.execURL(j)+path, "", nil)
	if err != nil {
		n.t.Fatal(err)
	}
	res.Body.Close()
}

// TestLocalnetBreakerTimeline runs the load driver against four executors,
// takes one dark, and follows it through the breaker: excluded on its
// traffic misses, back up, promoted to PROBE after the cooldown, its probe
// answered, HEALTHY again. It prints the timeline in blocks.
//
// Vote extensions are off (VE_ENABLE_HEIGHT=0), so the chain runs on
// traffic samples alone; TestLocalnetAttestationTimeline covers the
// attested path.
//
// The SPRT threshold is raised: with a handful of finishes before going
// dark, the misses of requests already in flight would otherwise make the
// SPRT take the executor out for the rest of the epoch, as it should, and
// there would be no recovery to show.
func TestLocalnetBreakerTimeline(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a 4-validator network; run without -short")
	}
	n := startNetwork(t, 6000, "NUM_VALIDATORS=4", "NUM_EXECUTORS=4", "EXPIRATION_BLOCKS=3", "BLOCK_TIME=500ms",
		"EPOCH_LENGTH=1000", "CB_INITIAL_COOLDOWN=8", "CB_MAX_COOLDOWN=64", "DOWNTIME_H_THRESHOLD=50", "VE_ENABLE_HEIGHT=0")
	dark := n.keyAddress("exec1")
	events := filepath.Join(n.home, "breaker-events.jsonl")

	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	var out bytes.Buffer
	load := exec.CommandContext(ctx, filepath.Join(n.bins, "loadgen"), "-grpc", n.grpcAddr(), "-keyring-dir", n.keysDir,
		"-rate", "4", "-run", "cb", "-events", events, "-quiet", "-exec-timeout", "1s")
	load.Stdout, load.Stderr = &out, &out
	if err := load.Start(); err != nil {
		t.Fatal(err)
	}
	loadDone := make(chan error, 1)
	go func() { loadDone <- load.Wait() }()

	begin := n.height()
	n.waitHeight(begin+4, time.Minute) // traffic is flowing
	darkAt := n.height()
	n.control(1, "/control/dark?mode=refuse")

	var excluded, probe, healthy healthJSON
	var upAt int64
	deadline := time.Now().Add(3 * time.Minute)
	for healthy.State == "" {
		if time.Now().After(deadline) {
			last, _ := n.health(dark)
			t.Logf("participant: %+v", n.participant(dark))
			_ = load.Process.Signal(os.Interrupt)
			<-loadDone
			t.Fatalf("no recovery in 3 minutes: excluded %+v probe %+v now %+v\nloadgen:\n%s", excluded, probe, last, out.String())
		}
		h, err := n.health(dark)
		if err != nil {
			t.Logf("health: %v", err)
		}
		switch {
		case h.State == "HEALTH_STATE_EXCLUDED" && excluded.State == "":
			excluded = h
			n.control(1, "/control/up")
			upAt = n.height()
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

	E, P, H := atoi(t, excluded.ExcludedAt), atoi(t, probe.SinceHeight), atoi(t, healthy.SinceHeight)
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
	ev := n.transitionEvent(E, dark)
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
	if P != 0 && P < E+atoi(t, excluded.CooldownBlocks) {
		t.Errorf("PROBE at %d before the cooldown ended at %s", P, excluded.EligibleHeight)
	}
	if duringExcl != 0 {
		t.Errorf("%d non-probe requests were routed to the excluded executor", duringExcl)
	}
	if probeAnswered != 1 {
		t.Errorf("%d answered probes, want 1", probeAnswered)
	}
}
