package localnet

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/inferenced/inferenced/monitor"
)

// Config is a network's settings, translated to scripts/localnet.sh's
// environment by Start and nowhere else. A zero field is left out of the
// environment, so the script's own default applies (written next to each
// field); DefaultConfig holds what the scenarios share.
type Config struct {
	// PortOffset is added to every port (PORT_OFFSET); each test has its
	// own, so networks never share a port. Required: offset 0 is the one
	// `make localnet` uses.
	PortOffset int

	Validators int           // NUM_VALIDATORS (4)
	Executors  int           // NUM_EXECUTORS (6)
	Agents     int           // AGENTS, registered agents agent0.. the load driver plays (3)
	BlockTime  time.Duration // BLOCK_TIME, CometBFT's timeout_commit (700ms)

	EpochLength      int64 // EPOCH_LENGTH, blocks (200)
	ExpirationBlocks int64 // EXPIRATION_BLOCKS, blocks before an inference expires (4)
	// SignedBlocksWindow is SIGNED_BLOCKS_WINDOW, x/slashing's
	// signed_blocks_window (the SDK's 100; a validator missing more than
	// half of it is jailed).
	SignedBlocksWindow int64
	InitialCooldown    int64 // CB_INITIAL_COOLDOWN, the breaker's first cooldown (10)
	MaxCooldown        int64 // CB_MAX_COOLDOWN, its longest (80)
	SPRTThreshold      int64 // DOWNTIME_H_THRESHOLD (4)
	// TrafficRule, if set, is the breaker's trip rule for traffic samples;
	// nil keeps the chain's defaults (health_cb_traffic_*).
	TrafficRule *TripRule

	// VEEnableHeight is VE_ENABLE_HEIGHT, the height from which validators
	// attest executor health: nil leaves the script's 2; Int64(0) runs on
	// traffic samples alone.
	VEEnableHeight *int64

	MonitorOffNodes []int // MONITOR_OFF_NODES: validators that abstain (none)
	// Monitor is every validator's [health-monitor] sizing (MONITOR_*);
	// a zero field keeps the script's (150ms, 250ms, 2s, the binary's
	// concurrency).
	Monitor MonitorConfig
	// Canary is every validator's canary settings (MONITOR_CANARY_*); a
	// zero field keeps the script's (scripts/localnet-init.sh).
	Canary CanaryConfig

	// AgentMissAllowance is AGENT_MISS_ALLOWANCE, the genesis
	// transfer_agent_miss_allowance (the chain's default, 10).
	AgentMissAllowance int64

	// FullNodes is FULL_NODES: nodes after the validators that validate
	// nothing, started by Net.Join (0).
	FullNodes int
	// SnapshotInterval and SnapshotKeepRecent are every node's state sync
	// snapshots (SNAPSHOT_INTERVAL, SNAPSHOT_KEEP_RECENT; none by default).
	SnapshotInterval, SnapshotKeepRecent int64

	// Fleet serves every executor from one fake-executor process (FLEET=1),
	// which the script does anyway above 16 executors.
	Fleet bool

	// Inferenced is every validator's binary (INFERENCED); "" is the one
	// built with the harness (see LOCALNET_BIN_DIR).
	Inferenced string
	// NodeBin and NodeEnv set one validator's binary and extra environment
	// (NODE<i>_BIN, NODE<i>_ENV: space-separated VAR=value words).
	NodeBin map[int]string
	NodeEnv map[int]string

	// InitScript, if set, is another release's scripts/localnet.sh: Start
	// runs its `init` (with Inferenced, that release's binary) so that the
	// genesis and homes are that release's, then this release's script
	// starts the network (Release.InitScript).
	InitScript string

	// Cosmovisor runs every validator under cosmovisor (COSMOVISOR=1,
	// COSMOVISOR_BIN): genesis/bin holds the node's binary, and
	// upgrades/<UpgradeName>/bin UpgradeBin if both are set (UPGRADE_NAME,
	// UPGRADE_BIN).
	Cosmovisor              bool
	CosmovisorBin           string
	UpgradeName, UpgradeBin string
}

// DefaultConfig is what the scenarios share: 4 validators and 4 fake
// executors, 500 ms blocks, an epoch no scenario reaches (1000 blocks), and
// breaker cooldowns of 8 blocks doubling up to 64. Set PortOffset.
func DefaultConfig() Config {
	return Config{
		Validators:      4,
		Executors:       4,
		BlockTime:       500 * time.Millisecond,
		EpochLength:     1000,
		InitialCooldown: 8,
		MaxCooldown:     64,
	}
}

// MonitorConfig is the health monitor's sizing the script writes into
// every validator's app.toml (MONITOR_PROBE_INTERVAL,
// MONITOR_PROBE_TIMEOUT, MONITOR_VERDICT_TTL, MONITOR_MAX_CONCURRENCY).
type MonitorConfig struct {
	ProbeInterval, ProbeTimeout, VerdictTTL time.Duration
	MaxConcurrency                          int
}

// CanaryConfig is the health monitor's canary keys the script writes into
// every validator's app.toml (MONITOR_CANARY_*). Off turns canaries off
// (every service report unknown: the chain runs on liveness attestations
// and traffic alone); a zero field keeps the script's default (up to 16
// executors: 1s, 200ms, 2s, 16, 4, 20s; above: the binary's).
type CanaryConfig struct {
	Off                                     bool
	Interval, SuspectInterval, Timeout, TTL time.Duration
	Window, MinSamples, MaxConcurrency      int
}

// BinaryCanaries is the binary's own canary defaults (monitor.DefaultConfig,
// sized for gonka's blocks), spelled out for a network that must not take
// the script's small-network ones.
func BinaryCanaries() CanaryConfig {
	d := monitor.DefaultConfig()
	return CanaryConfig{Interval: d.CanaryInterval, SuspectInterval: d.CanarySuspectInterval, Timeout: d.CanaryTimeout,
		TTL: d.CanaryTTL, Window: d.CanaryWindow, MinSamples: d.CanaryMinSamples, MaxConcurrency: d.CanaryMaxConcurrency}
}

// TripRule is a trip rule for traffic samples: at least MinSamples and a
// miss rate above ThresholdPct over the last WindowSamples, or
// ConsecutiveMisses in a row (CB_TRAFFIC_WINDOW, CB_TRAFFIC_MIN_SAMPLES,
// CB_TRAFFIC_THRESHOLD_PCT, CB_TRAFFIC_CONSECUTIVE).
type TripRule struct {
	WindowSamples, MinSamples, ThresholdPct, ConsecutiveMisses int64
}

// Int64 returns a pointer to v, for the optional fields of Config.
func Int64(v int64) *int64 { return &v }

// scriptValidators is scripts/localnet.sh's NUM_VALIDATORS default.
const scriptValidators = 4

// scriptAgents is scripts/localnet.sh's AGENTS default.
const scriptAgents = 3

// agents is the number of registered agents agent0.. the network has.
func (c Config) agents() int {
	if c.Agents == 0 {
		return scriptAgents
	}
	return c.Agents
}

// validators is the number of validators the network runs.
func (c Config) validators() int {
	if c.Validators == 0 {
		return scriptValidators
	}
	return c.Validators
}

// env is the script's environment for c (without the harness's own
// LOCALNET_HOME, INFERENCED, FAKE_EXECUTOR and PORT_OFFSET).
func (c Config) env() []string {
	var env []string
	setInt := func(name string, v int64) {
		if v != 0 {
			env = append(env, name+"="+strconv.FormatInt(v, 10))
		}
	}
	setInt("NUM_VALIDATORS", int64(c.Validators))
	setInt("NUM_EXECUTORS", int64(c.Executors))
	setInt("AGENTS", int64(c.Agents))
	setInt("EXPIRATION_BLOCKS", c.ExpirationBlocks)
	setInt("SIGNED_BLOCKS_WINDOW", c.SignedBlocksWindow)
	if c.BlockTime != 0 {
		env = append(env, "BLOCK_TIME="+c.BlockTime.String())
	}
	setInt("EPOCH_LENGTH", c.EpochLength)
	setInt("CB_INITIAL_COOLDOWN", c.InitialCooldown)
	setInt("CB_MAX_COOLDOWN", c.MaxCooldown)
	setInt("DOWNTIME_H_THRESHOLD", c.SPRTThreshold)
	if r := c.TrafficRule; r != nil {
		setInt("CB_TRAFFIC_WINDOW", r.WindowSamples)
		setInt("CB_TRAFFIC_MIN_SAMPLES", r.MinSamples)
		setInt("CB_TRAFFIC_THRESHOLD_PCT", r.ThresholdPct)
		setInt("CB_TRAFFIC_CONSECUTIVE", r.ConsecutiveMisses)
	}
	if c.VEEnableHeight != nil {
		env = append(env, "VE_ENABLE_HEIGHT="+strconv.FormatInt(*c.VEEnableHeight, 10))
	}
	setDuration := func(name string, d time.Duration) {
		if d != 0 {
			env = append(env, name+"="+d.String())
		}
	}
	setDuration("MONITOR_PROBE_INTERVAL", c.Monitor.ProbeInterval)
	setDuration("MONITOR_PROBE_TIMEOUT", c.Monitor.ProbeTimeout)
	setDuration("MONITOR_VERDICT_TTL", c.Monitor.VerdictTTL)
	setInt("MONITOR_MAX_CONCURRENCY", int64(c.Monitor.MaxConcurrency))
	if c.Canary.Off {
		env = append(env, "MONITOR_CANARY_ENABLED=false")
	}
	setDuration("MONITOR_CANARY_INTERVAL", c.Canary.Interval)
	setDuration("MONITOR_CANARY_SUSPECT_INTERVAL", c.Canary.SuspectInterval)
	setDuration("MONITOR_CANARY_TIMEOUT", c.Canary.Timeout)
	setInt("MONITOR_CANARY_WINDOW", int64(c.Canary.Window))
	setInt("MONITOR_CANARY_MIN_SAMPLES", int64(c.Canary.MinSamples))
	setDuration("MONITOR_CANARY_TTL", c.Canary.TTL)
	setInt("MONITOR_CANARY_MAX_CONCURRENCY", int64(c.Canary.MaxConcurrency))
	setInt("AGENT_MISS_ALLOWANCE", c.AgentMissAllowance)
	setInt("FULL_NODES", int64(c.FullNodes))
	setInt("SNAPSHOT_INTERVAL", c.SnapshotInterval)
	setInt("SNAPSHOT_KEEP_RECENT", c.SnapshotKeepRecent)
	if c.Fleet {
		env = append(env, "FLEET=1")
	}
	if len(c.MonitorOffNodes) > 0 {
		nodes := make([]string, len(c.MonitorOffNodes))
		for k, i := range c.MonitorOffNodes {
			nodes[k] = strconv.Itoa(i)
		}
		env = append(env, "MONITOR_OFF_NODES="+strings.Join(nodes, " "))
	}
	if c.Cosmovisor {
		env = append(env, "COSMOVISOR=1")
	}
	setString := func(name, v string) {
		if v != "" {
			env = append(env, name+"="+v)
		}
	}
	setString("COSMOVISOR_BIN", c.CosmovisorBin)
	setString("UPGRADE_NAME", c.UpgradeName)
	setString("UPGRADE_BIN", c.UpgradeBin)
	for _, i := range sortedKeys(c.NodeBin) {
		env = append(env, fmt.Sprintf("NODE%d_BIN=%s", i, c.NodeBin[i]))
	}
	for _, i := range sortedKeys(c.NodeEnv) {
		env = append(env, fmt.Sprintf("NODE%d_ENV=%s", i, c.NodeEnv[i]))
	}
	return env
}

// check refuses a network that would share ports with `make localnet` or
// reach the ephemeral range, where an outgoing connection could hold one,
// and returns the network's ports (the script in root says which).
func (c Config) check(root string) (Ports, error) {
	if c.PortOffset <= 0 {
		return Ports{}, fmt.Errorf("port offset %d: each test network needs an offset of its own (0 is make localnet's)", c.PortOffset)
	}
	p, err := portsOf(root, c)
	if err != nil {
		return Ports{}, err
	}
	if top := p.highest(); top >= ephemeralPorts {
		return Ports{}, fmt.Errorf("port offset %d with %d validators reaches port %d, in the ephemeral range (%d and up)",
			c.PortOffset, c.validators(), top, ephemeralPorts)
	}
	return p, nil
}

func sortedKeys(m map[int]string) []int {
	keys := make([]int, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
