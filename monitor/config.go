package monitor

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"time"

	"github.com/spf13/cast"

	"github.com/inferenced/inferenced/monitor/cusum"
)

// Section is the app.toml table of the monitor's configuration.
const Section = "health-monitor"

// Config is the [health-monitor] section of app.toml. Each key is written
// once, in its field's mapstructure tag: ReadConfig, Validate's messages
// and ConfigTemplate all take it from there.
type Config struct {
	// Enabled starts the monitor with the node. A validator without it
	// abstains in its vote extensions.
	Enabled bool `mapstructure:"enabled"`
	// ProbeInterval is how often every executor is probed: at most once per
	// interval each, start times spread over it.
	ProbeInterval time.Duration `mapstructure:"probe-interval"`
	// ProbeTimeout bounds one probe: connect, request and response.
	ProbeTimeout time.Duration `mapstructure:"probe-timeout"`
	// VerdictTTL is how long a verdict stays fresh; older ones are unknown.
	VerdictTTL time.Duration `mapstructure:"verdict-ttl"`
	// MaxConcurrency bounds the probes in flight; a slot is reused as soon
	// as its probe ends. The coverage line logged once per epoch says
	// whether it covers the group (monitor/README.md, sizing).
	MaxConcurrency int `mapstructure:"max-concurrency"`
	// HealthPath is the path probed on each executor's host.
	HealthPath string `mapstructure:"health-path"`
	// AllowPrivate lets the monitor probe loopback, private and link-local
	// addresses. Participant URLs are untrusted: leave it off on public
	// networks, or a participant could make validators probe their own
	// internal services.
	AllowPrivate bool `mapstructure:"allow-private"`

	// CanaryEnabled sends canary inferences to every member that serves a
	// model, shaped like clients' requests, and reports the failed share
	// of each one's recent canaries (Service). Without it every service
	// report is unknown.
	CanaryEnabled bool `mapstructure:"canary-enabled"`
	// CanaryInterval is the mean time between two canaries to one executor
	// in the background (each gap drawn within +-25% of it).
	CanaryInterval time.Duration `mapstructure:"canary-interval"`
	// CanarySuspectInterval is the mean time between two canaries to a
	// suspect executor, for canary-window canaries after the last trigger.
	CanarySuspectInterval time.Duration `mapstructure:"canary-suspect-interval"`
	// CanaryTimeout bounds one canary: connect, inference and response.
	CanaryTimeout time.Duration `mapstructure:"canary-timeout"`
	// CanaryWindow is how many of an executor's last canary outcomes are
	// kept, and how many suspect-rate canaries the chain's mark starts.
	CanaryWindow int `mapstructure:"canary-window"`
	// CanaryMinSamples is how many fresh outcomes a report needs; with
	// fewer it is unknown.
	CanaryMinSamples int `mapstructure:"canary-min-samples"`
	// CanaryTTL is how long an outcome counts in the report.
	CanaryTTL time.Duration `mapstructure:"canary-ttl"`
	// CanaryMaxConcurrency bounds the canaries in flight, apart from the
	// probes' slots: neither can starve the other.
	CanaryMaxConcurrency int `mapstructure:"canary-max-concurrency"`
	// CanaryBaselinePct and CanaryDegradedPct are the canary miss rates
	// (percent) of a serving and of a degraded executor, between which
	// each executor's CUSUM weighs its outcomes (monitor/cusum).
	CanaryBaselinePct int `mapstructure:"canary-baseline-pct"`
	CanaryDegradedPct int `mapstructure:"canary-degraded-pct"`
	// CanaryAlarm is the CUSUM threshold (milli-nats) from which the
	// report is the failed share; below it, until the alarm is raised, it
	// is 0%.
	CanaryAlarm int `mapstructure:"canary-alarm"`
}

// The canary defaults: the simulator's chosen cusum candidate
// (docs/simulation.md "Canaries", scripts/canary-frontier.sh) at gonka's
// ~6 s blocks: one canary per executor every 10 blocks in the background,
// windows of 16 with at least 8 fresh, a CUSUM between 5% and 25% misses
// alarming at 4,000 milli-nats. The alarm, not the window's length, keeps
// honest executors at the baseline out of service exclusions, so the
// window can be the short one that burst-on-first-miss could not afford.
const (
	defaultCanaryInterval        = 60 * time.Second
	defaultCanarySuspectInterval = 2 * time.Second
	defaultCanaryTimeout         = 10 * time.Second
	defaultCanaryWindow          = 16
	defaultCanaryMinSamples      = 8
	defaultCanaryTTL             = 40 * time.Minute
	defaultCanaryMaxConcurrency  = 64
	defaultCanaryBaselinePct     = 5
	defaultCanaryDegradedPct     = 25
	defaultCanaryAlarm           = 4_000
)

// DefaultConfig is the configuration of a new node.
func DefaultConfig() Config {
	return Config{
		Enabled:        true,
		ProbeInterval:  time.Second,
		ProbeTimeout:   800 * time.Millisecond,
		VerdictTTL:     5 * time.Second,
		MaxConcurrency: 512,
		HealthPath:     "/health",

		CanaryEnabled:         true,
		CanaryInterval:        defaultCanaryInterval,
		CanarySuspectInterval: defaultCanarySuspectInterval,
		CanaryTimeout:         defaultCanaryTimeout,
		CanaryWindow:          defaultCanaryWindow,
		CanaryMinSamples:      defaultCanaryMinSamples,
		CanaryTTL:             defaultCanaryTTL,
		CanaryMaxConcurrency:  defaultCanaryMaxConcurrency,
		CanaryBaselinePct:     defaultCanaryBaselinePct,
		CanaryDegradedPct:     defaultCanaryDegradedPct,
		CanaryAlarm:           defaultCanaryAlarm,
	}
}

// Bounds Validate enforces. max-concurrency is bounded by what one
// process can hold open: each probe in flight is a connection (a file
// descriptor), beside one kept-alive connection per healthy executor.
const (
	minProbeInterval = 100 * time.Millisecond
	maxProbeInterval = time.Hour
	maxConcurrency   = 8192
	maxCanaryWindow  = 64
	maxCanaryAlarm   = 100_000
)

// name is the app.toml key of the Config field called field, within the
// section; key is the same, qualified by the section.
func name(field string) string {
	f, _ := reflect.TypeFor[Config]().FieldByName(field)
	return f.Tag.Get("mapstructure")
}

func key(field string) string { return Section + "." + name(field) }

// Validate checks the configuration.
func (c Config) Validate() error {
	switch {
	case c.ProbeInterval < minProbeInterval || c.ProbeInterval > maxProbeInterval:
		return fmt.Errorf("%s must be in [%s, %s], got %s", key("ProbeInterval"), minProbeInterval, maxProbeInterval, c.ProbeInterval)
	case c.ProbeTimeout <= 0 || c.ProbeTimeout > c.ProbeInterval*10:
		return fmt.Errorf("%s must be in (0, 10 x %s], got %s", key("ProbeTimeout"), name("ProbeInterval"), c.ProbeTimeout)
	case c.VerdictTTL < c.ProbeInterval:
		return fmt.Errorf("%s (%s) must be at least %s (%s)", key("VerdictTTL"), c.VerdictTTL, name("ProbeInterval"), c.ProbeInterval)
	case c.MaxConcurrency < 1 || c.MaxConcurrency > maxConcurrency:
		return fmt.Errorf("%s must be in [1, %d], got %d", key("MaxConcurrency"), maxConcurrency, c.MaxConcurrency)
	case !strings.HasPrefix(c.HealthPath, "/") || strings.ContainsAny(c.HealthPath, "?#") || len(c.HealthPath) > 256:
		return errors.New(key("HealthPath") + " must be an absolute path without query or fragment, at most 256 bytes")
	}
	return c.validateCanaries()
}

// validateCanaries checks the canary keys (checked whether or not
// canaries are enabled, so that turning them on cannot fail later).
func (c Config) validateCanaries() error {
	// At the background rate, the fresh outcomes of the last TTL must be
	// enough for a report: min-samples canaries, the last one ended.
	needTTL := time.Duration(c.CanaryMinSamples)*c.CanaryInterval + c.CanaryTimeout
	switch {
	case c.CanaryInterval < minProbeInterval || c.CanaryInterval > maxProbeInterval:
		return fmt.Errorf("%s must be in [%s, %s], got %s", key("CanaryInterval"), minProbeInterval, maxProbeInterval, c.CanaryInterval)
	case c.CanarySuspectInterval < minProbeInterval || c.CanarySuspectInterval > c.CanaryInterval:
		return fmt.Errorf("%s must be in [%s, %s (%s)], got %s", key("CanarySuspectInterval"), minProbeInterval,
			name("CanaryInterval"), c.CanaryInterval, c.CanarySuspectInterval)
	case c.CanaryTimeout <= 0 || c.CanaryTimeout > c.CanaryInterval*10:
		return fmt.Errorf("%s must be in (0, 10 x %s], got %s", key("CanaryTimeout"), name("CanaryInterval"), c.CanaryTimeout)
	case c.CanaryWindow < 1 || c.CanaryWindow > maxCanaryWindow:
		return fmt.Errorf("%s must be in [1, %d], got %d", key("CanaryWindow"), maxCanaryWindow, c.CanaryWindow)
	case c.CanaryMinSamples < 1 || c.CanaryMinSamples > c.CanaryWindow:
		return fmt.Errorf("%s must be in [1, %s (%d)], got %d", key("CanaryMinSamples"), name("CanaryWindow"), c.CanaryWindow, c.CanaryMinSamples)
	case c.CanaryTTL < needTTL:
		return fmt.Errorf("%s (%s) must be at least %s x %s + %s (%s), or reports go unknown between bursts",
			key("CanaryTTL"), c.CanaryTTL, name("CanaryMinSamples"), name("CanaryInterval"), name("CanaryTimeout"), needTTL)
	case c.CanaryMaxConcurrency < 1 || c.CanaryMaxConcurrency > maxConcurrency:
		return fmt.Errorf("%s must be in [1, %d], got %d", key("CanaryMaxConcurrency"), maxConcurrency, c.CanaryMaxConcurrency)
	case c.CanaryBaselinePct < 1 || c.CanaryBaselinePct > 98:
		return fmt.Errorf("%s must be in [1, 98], got %d", key("CanaryBaselinePct"), c.CanaryBaselinePct)
	case c.CanaryDegradedPct <= c.CanaryBaselinePct || c.CanaryDegradedPct > 99:
		return fmt.Errorf("%s must be in (%s (%d), 99], got %d", key("CanaryDegradedPct"), name("CanaryBaselinePct"),
			c.CanaryBaselinePct, c.CanaryDegradedPct)
	case c.CanaryAlarm < 1 || c.CanaryAlarm > maxCanaryAlarm:
		return fmt.Errorf("%s must be in [1, %d] milli-nats, got %d", key("CanaryAlarm"), maxCanaryAlarm, c.CanaryAlarm)
	}
	return nil
}

// cusumRule is the CUSUM the canary keys configure (valid once Validate
// passed).
func (c Config) cusumRule() (cusum.Rule, error) {
	return cusum.New(c.CanaryBaselinePct*100, c.CanaryDegradedPct*100, c.CanaryAlarm)
}

// Options is how the node hands app.toml over (servertypes.AppOptions).
type Options interface {
	Get(key string) any
}

// ReadConfig reads [health-monitor] from the node's options, with the
// defaults for what is missing, and validates it.
func ReadConfig(opts Options) (Config, error) {
	cfg := DefaultConfig()
	v := reflect.ValueOf(&cfg).Elem()
	for _, f := range reflect.VisibleFields(v.Type()) {
		raw := opts.Get(key(f.Name))
		if raw == nil {
			continue
		}
		switch p := v.FieldByIndex(f.Index).Addr().Interface().(type) {
		case *bool:
			*p = cast.ToBool(raw)
		case *time.Duration:
			*p = cast.ToDuration(raw)
		case *int:
			*p = cast.ToInt(raw)
		case *string:
			*p = cast.ToString(raw)
		default:
			return cfg, fmt.Errorf("app.toml: %s: no reader for %s", key(f.Name), f.Type)
		}
	}
	if err := cfg.Validate(); err != nil {
		return cfg, fmt.Errorf("app.toml: %w", err)
	}
	return cfg, nil
}

// help is the comment ConfigTemplate writes above each key, in the order
// of Config's fields (TestConfigTemplateCoversEveryKey).
var help = []struct{ field, text string }{
	{"Enabled", "Start the monitor with the node."},
	{"ProbeInterval", "How often every executor is probed (once per interval each, spread over it)."},
	{"ProbeTimeout", "Bound on one probe (connect, request, response). A slower answer is a miss."},
	{"VerdictTTL", "A verdict older than this is reported as unknown."},
	{"MaxConcurrency", "Probes in flight at once (each holds a connection). Enough for the group when\nmax-concurrency x probe-interval / mean probe latency exceeds the members;\nthe monitor logs whether it does at start-up and each epoch."},
	{"HealthPath", "Path probed with GET on each executor's host; 200 is ok, anything else,\nredirects included, is a miss."},
	{"AllowPrivate", "Probe loopback, private and link-local addresses. Executor URLs come from\nuntrusted participants: keep this false on public networks."},
	{"CanaryEnabled", "Send canary inferences, shaped like clients' requests, to every executor's\ninference endpoint and report the failed share of its recent ones."},
	{"CanaryInterval", "Mean time between two canaries to one executor (each gap within +-25%)."},
	{"CanarySuspectInterval", "Mean time between canaries to a suspect executor: for canary-window canaries\nafter the breaker starts holding it, and while its CUSUM (below) is above 0."},
	{"CanaryTimeout", "Bound on one canary (connect, inference, response). A slower answer is a miss."},
	{"CanaryWindow", "Outcomes kept per executor, the span of its report (1..64)."},
	{"CanaryMinSamples", "Fresh outcomes a report needs; with fewer it is unknown (1..canary-window)."},
	{"CanaryTTL", "An outcome older than this no longer counts (at least\ncanary-min-samples x canary-interval + canary-timeout)."},
	{"CanaryMaxConcurrency", "Canaries in flight at once, apart from the probes' slots. Enough when\ncanary-max-concurrency x canary-interval / mean canary latency exceeds the\nmembers; the coverage log line says whether it does."},
	{"CanaryBaselinePct", "Canary miss rate of a serving executor, in percent (1..98). Each executor's\nCUSUM adds ln(degraded/baseline) per failed canary and subtracts\nln((100-baseline)/(100-degraded)) per ok (milli-nats, never below 0)."},
	{"CanaryDegradedPct", "Canary miss rate of a degraded executor, in percent (baseline+1..99)."},
	{"CanaryAlarm", "CUSUM threshold in milli-nats (1..100000): from it the report is the failed\nshare of the fresh canaries, until the sum is back at 0; otherwise 0%.\nAt 5% / 25% (+1609 a miss, -236 an ok), 4000 is three misses in a row."},
}

// ConfigTemplate is the app.toml section, with the defaults explained. It
// is executed on the app config, whose HealthMonitor field is a Config.
var ConfigTemplate = configTemplate()

func configTemplate() string {
	var b strings.Builder
	b.WriteString(`
###############################################################################
###                         Executor health monitor                         ###
###############################################################################

# The monitor probes every executor of the current epoch group and puts its
# verdicts in this validator's vote extensions. Without it the validator
# abstains.
[` + Section + "]\n")
	for _, h := range help {
		f, _ := reflect.TypeFor[Config]().FieldByName(h.field)
		value := "{{ .HealthMonitor." + h.field + " }}"
		if f.Type.Kind() == reflect.String || f.Type == reflect.TypeFor[time.Duration]() {
			value = `"` + value + `"`
		}
		b.WriteString("\n# " + strings.ReplaceAll(h.text, "\n", "\n# ") + "\n" + name(h.field) + " = " + value + "\n")
	}
	return b.String()
}
