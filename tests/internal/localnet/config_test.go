package localnet

import (
	"slices"
	"strings"
	"testing"
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
	want := []string{"NUM_VALIDATORS=4", "NUM_EXECUTORS=4", "AGENTS=2", "EXPIRATION_BLOCKS=3", "BLOCK_TIME=500ms", "EPOCH_LENGTH=1000",
		"CB_INITIAL_COOLDOWN=8", "CB_MAX_COOLDOWN=64", "DOWNTIME_H_THRESHOLD=50",
		"CB_TRAFFIC_WINDOW=16", "CB_TRAFFIC_MIN_SAMPLES=4", "CB_TRAFFIC_THRESHOLD_PCT=25", "CB_TRAFFIC_CONSECUTIVE=3",
		"VE_ENABLE_HEIGHT=0",
		"MONITOR_OFF_NODES=1 3", "NODE1_BIN=/bin/other", "NODE3_BIN=/bin/liar", "NODE3_ENV=A=1 B=2"}
	if got := c.env(); !slices.Equal(got, want) {
		t.Errorf("env\n got %q\nwant %q", got, want)
	}
}

func TestConfigCheckKeepsPortsOwnAndBelowTheEphemeralRange(t *testing.T) {
	c := DefaultConfig()
	if err := c.check(); err == nil || !strings.Contains(err.Error(), "offset") {
		t.Errorf("offset 0 accepted: %v", err)
	}
	c.PortOffset = 5600 // the highest in use: ABCI of node 3 at 32558
	if err := c.check(); err != nil {
		t.Errorf("offset 5600: %v", err)
	}
	c.PortOffset = 5800 // node 3's ABCI port 32758, still below
	if err := c.check(); err != nil {
		t.Errorf("offset 5800: %v", err)
	}
	c.PortOffset = 6000
	if err := c.check(); err == nil {
		t.Errorf("offset 6000 accepted: node 3's ABCI port %d is ephemeral", highestPort(c))
	}
}
