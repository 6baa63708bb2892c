package localnet

import (
	"slices"
	"strings"
	"testing"
	"time"
)

// The config reaches the script as exactly the variables it sets: a zero
// field is left out, so the script's default applies.
func TestConfigEnvLeavesUnsetFieldsToTheScript(t *testing.T) {
	if got := (Config{}).env(); len(got) != 0 {
		t.Errorf("zero config sets %q, want nothing", got)
	}
	want := []string{"NUM_VALIDATORS=4", "NUM_EXECUTORS=4", "BLOCK_TIME=500ms", "EPOCH_LENGTH=1000",
		"CB_INITIAL_COOLDOWN=8", "CB_MAX_COOLDOWN=64"}
	if got := DefaultConfig().env(); !slices.Equal(got, want) {
		t.Errorf("DefaultConfig env %q, want %q", got, want)
	}
}

func TestConfigEnvSpellsEverySetting(t *testing.T) {
	c := DefaultConfig()
	c.ExpirationBlocks, c.SPRTThreshold, c.Agents = 3, 50, 2
	c.TrafficRule = &TripRule{WindowSamples: 16, MinSamples: 4, ThresholdPct: 25, ConsecutiveMisses: 3}
	c.VEEnableHeight = Int64(0)
	c.MonitorOffNodes = []int{1, 3}
	c.NodeBin = map[int]string{3: "/bin/liar", 1: "/bin/other"}
	c.NodeEnv = map[int]string{3: "A=1 B=2"}
	c.Monitor = MonitorConfig{ProbeInterval: 400 * time.Millisecond, ProbeTimeout: 200 * time.Millisecond,
		VerdictTTL: 3 * time.Second, MaxConcurrency: 256}
	c.Canary = CanaryConfig{Off: true, Interval: 2 * time.Second, SuspectInterval: 300 * time.Millisecond,
		Timeout: time.Second, TTL: time.Minute, Window: 8, MinSamples: 3, MaxConcurrency: 16}
	c.AgentMissAllowance = 60
	c.Fleet = true
	c.FullNodes, c.SnapshotInterval, c.SnapshotKeepRecent = 2, 20, 3
	want := []string{"NUM_VALIDATORS=4", "NUM_EXECUTORS=4", "AGENTS=2", "EXPIRATION_BLOCKS=3", "BLOCK_TIME=500ms", "EPOCH_LENGTH=1000",
		"CB_INITIAL_COOLDOWN=8", "CB_MAX_COOLDOWN=64", "DOWNTIME_H_THRESHOLD=50",
		"CB_TRAFFIC_WINDOW=16", "CB_TRAFFIC_MIN_SAMPLES=4", "CB_TRAFFIC_THRESHOLD_PCT=25", "CB_TRAFFIC_CONSECUTIVE=3",
		"VE_ENABLE_HEIGHT=0",
		"MONITOR_PROBE_INTERVAL=400ms", "MONITOR_PROBE_TIMEOUT=200ms", "MONITOR_VERDICT_TTL=3s", "MONITOR_MAX_CONCURRENCY=256",
		"MONITOR_CANARY_ENABLED=false", "MONITOR_CANARY_INTERVAL=2s", "MONITOR_CANARY_SUSPECT_INTERVAL=300ms",
		"MONITOR_CANARY_TIMEOUT=1s", "MONITOR_CANARY_WINDOW=8", "MONITOR_CANARY_MIN_SAMPLES=3", "MONITOR_CANARY_TTL=1m0s",
		"MONITOR_CANARY_MAX_CONCURRENCY=16", "AGENT_MISS_ALLOWANCE=60",
		"FULL_NODES=2", "SNAPSHOT_INTERVAL=20", "SNAPSHOT_KEEP_RECENT=3",
		"FLEET=1", "MONITOR_OFF_NODES=1 3", "NODE1_BIN=/bin/other", "NODE3_BIN=/bin/liar", "NODE3_ENV=A=1 B=2"}
	if got := c.env(); !slices.Equal(got, want) {
		t.Errorf("env\n got %q\nwant %q", got, want)
	}
}

func TestConfigCheckKeepsPortsOwnAndBelowTheEphemeralRange(t *testing.T) {
	root := repoRoot(t)
	c := DefaultConfig()
	if _, err := c.check(root); err == nil || !strings.Contains(err.Error(), "offset") {
		t.Errorf("offset 0 accepted: %v", err)
	}
	c.PortOffset = 5600 // the highest in use: node 3's CometBFT metrics at 32560
	if _, err := c.check(root); err != nil {
		t.Errorf("offset 5600: %v", err)
	}
	c.PortOffset = 5800 // node 3's metrics port 32760, still below
	if _, err := c.check(root); err != nil {
		t.Errorf("offset 5800: %v", err)
	}
	c.PortOffset = 6000
	if p, err := c.check(root); err == nil {
		t.Errorf("offset 6000 accepted: port %d is ephemeral", p.highest())
	}
}

// The ports come from the script's own functions: validator i's at a
// stride of 100, executor j at the executors' base + j, the fleet's range.
func TestPortsAreTheScripts(t *testing.T) {
	c := DefaultConfig()
	c.PortOffset, c.Executors = 1000, 1000
	p, err := c.check(repoRoot(t))
	if err != nil {
		t.Fatal(err)
	}
	n := &Net{ports: p}
	for _, tc := range []struct{ got, want string }{
		{n.RPC(0), "http://127.0.0.1:27657"},
		{n.RPC(3), "http://127.0.0.1:27957"},
		{n.RPCAddr(), "tcp://127.0.0.1:27657"},
		{n.REST(1), "http://127.0.0.1:2417"},
		{n.GRPC(2), "127.0.0.1:10290"},
		{n.Prometheus(3), "http://127.0.0.1:27960"},
		{n.Exec(0), "http://127.0.0.1:9080"},
		{n.Exec(999), "http://127.0.0.1:10079"},
	} {
		if tc.got != tc.want {
			t.Errorf("got %s, want %s", tc.got, tc.want)
		}
	}
	if !n.Fleet() {
		t.Error("1000 executors not served by a fleet")
	}
	c.Executors = 4
	if p, err = c.check(repoRoot(t)); err != nil || p.fleet || len(p.byKind[portExec]) != 4 {
		t.Errorf("4 executors: fleet %v, %d executor ports, %v", p.fleet, len(p.byKind[portExec]), err)
	}
	c.Fleet = true
	if p, err = c.check(repoRoot(t)); err != nil || !p.fleet {
		t.Errorf("Fleet set: fleet %v, %v", p.fleet, err)
	}
}
