package monitor

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// Config is the [health-monitor] section of app.toml.
type Config struct {
	// Enabled starts the monitor with the node. A validator without it
	// abstains in its vote extensions.
	Enabled bool `mapstructure:"enabled"`
	// ProbeInterval is how often every executor is probed.
	ProbeInterval time.Duration `mapstructure:"probe-interval"`
	// ProbeTimeout bounds one probe: connect, request and response.
	ProbeTimeout time.Duration `mapstructure:"probe-timeout"`
	// VerdictTTL is how long a verdict stays fresh; older ones are unknown.
	VerdictTTL time.Duration `mapstructure:"verdict-ttl"`
	// MaxConcurrency bounds the probes in flight.
	MaxConcurrency int `mapstructure:"max-concurrency"`
	// HealthPath is the path probed on each executor's host.
	HealthPath string `mapstructure:"health-path"`
	// AllowPrivate lets the monitor probe loopback, private and link-local
	// addresses. Participant URLs are untrusted: leave it off on public
	// networks, or a participant could make validators probe their own
	// internal services.
	AllowPrivate bool `mapstructure:"allow-private"`
}

// DefaultConfig is the configuration of a new node.
func DefaultConfig() Config {
	return Config{
		Enabled:        true,
		ProbeInterval:  time.Second,
		ProbeTimeout:   800 * time.Millisecond,
		VerdictTTL:     5 * time.Second,
		MaxConcurrency: 32,
		HealthPath:     "/health",
	}
}

// Validate checks the configuration.
func (c Config) Validate() error {
	switch {
	case c.ProbeInterval < 100*time.Millisecond:
		return fmt.Errorf("health-monitor.probe-interval must be at least 100ms, got %s", c.ProbeInterval)
	case c.ProbeTimeout <= 0 || c.ProbeTimeout > c.ProbeInterval*10:
		return fmt.Errorf("health-monitor.probe-timeout must be in (0, 10 x probe-interval], got %s", c.ProbeTimeout)
	case c.VerdictTTL < c.ProbeInterval:
		return fmt.Errorf("health-monitor.verdict-ttl (%s) must be at least probe-interval (%s)", c.VerdictTTL, c.ProbeInterval)
	case c.MaxConcurrency < 1 || c.MaxConcurrency > 1024:
		return fmt.Errorf("health-monitor.max-concurrency must be in [1, 1024], got %d", c.MaxConcurrency)
	case !strings.HasPrefix(c.HealthPath, "/") || strings.ContainsAny(c.HealthPath, "?#") || len(c.HealthPath) > 256:
		return errors.New("health-monitor.health-path must be an absolute path without query or fragment, at most 256 bytes")
	}
	return nil
}

// ConfigTemplate is the app.toml section, with the defaults explained.
const ConfigTemplate = `
###############################################################################
###                         Executor health monitor                         ###
###############################################################################

# The monitor probes every executor of the current epoch group and puts its
# verdicts in this validator's vote extensions. Without it the validator
# abstains.
[health-monitor]

# Start the monitor with the node.
enabled = {{ .HealthMonitor.Enabled }}

# How often every executor is probed.
probe-interval = "{{ .HealthMonitor.ProbeInterval }}"

# Bound on one probe (connect, request, response). A slower answer is a miss.
probe-timeout = "{{ .HealthMonitor.ProbeTimeout }}"

# A verdict older than this is reported as unknown.
verdict-ttl = "{{ .HealthMonitor.VerdictTTL }}"

# Probes in flight at once.
max-concurrency = {{ .HealthMonitor.MaxConcurrency }}

# Path probed with GET on each executor's host; 200 is ok, anything else,
# redirects included, is a miss.
health-path = "{{ .HealthMonitor.HealthPath }}"

# Probe loopback, private and link-local addresses. Executor URLs come from
# untrusted participants: keep this false on public networks.
allow-private = {{ .HealthMonitor.AllowPrivate }}
`
