package monitor

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
	"text/template"
	"time"

	"github.com/spf13/viper"
)

// appToml renders ConfigTemplate for cfg, as the node's init does, and
// reads it back as the node does.
func appToml(t *testing.T, cfg Config) *viper.Viper {
	t.Helper()
	tmpl, err := template.New("app.toml").Parse(ConfigTemplate)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := tmpl.Execute(&out, struct{ HealthMonitor Config }{cfg}); err != nil {
		t.Fatal(err)
	}
	v := viper.New()
	v.SetConfigType("toml")
	if err := v.ReadConfig(&out); err != nil {
		t.Fatalf("rendered template is not valid TOML: %v\n%s", err, out.String())
	}
	return v
}

// Every field of Config has a key and one commented line in the template,
// in field order, and what the template writes reads back to the same
// configuration.
func TestConfigTemplateCoversEveryKey(t *testing.T) {
	fields := reflect.VisibleFields(reflect.TypeFor[Config]())
	if len(fields) != len(help) {
		t.Fatalf("%d fields, %d template entries", len(fields), len(help))
	}
	for i, f := range fields {
		if help[i].field != f.Name || f.Tag.Get("mapstructure") == "" {
			t.Errorf("field %d: %s (tag %q), template entry %s", i, f.Name, f.Tag.Get("mapstructure"), help[i].field)
		}
		if !strings.Contains(ConfigTemplate, "\n"+name(f.Name)+" = ") {
			t.Errorf("template has no %s", name(f.Name))
		}
	}
	custom := Config{Enabled: false, ProbeInterval: 2 * time.Second, ProbeTimeout: time.Second, VerdictTTL: 9 * time.Second,
		MaxConcurrency: 7, HealthPath: "/healthz", AllowPrivate: true,
		CanaryEnabled: false, CanaryInterval: time.Minute, CanarySuspectInterval: 5 * time.Second, CanaryTimeout: 20 * time.Second,
		CanaryWindow: 32, CanaryMinSamples: 8, CanaryTTL: time.Hour, CanaryMaxConcurrency: 128,
		CanaryBaselinePct: 2, CanaryDegradedPct: 40, CanaryAlarm: 6000}
	for _, cfg := range []Config{DefaultConfig(), custom} {
		got, err := ReadConfig(appToml(t, cfg))
		if err != nil || got != cfg {
			t.Errorf("wrote %+v, read %+v (%v)", cfg, got, err)
		}
	}
}

type options map[string]any

func (o options) Get(key string) any { return o[key] }

func TestReadConfig(t *testing.T) {
	got, err := ReadConfig(options{})
	if err != nil || got != DefaultConfig() {
		t.Fatalf("no options: %+v %v", got, err)
	}
	got, err = ReadConfig(options{"health-monitor.enabled": false, "health-monitor.probe-interval": "250ms",
		"health-monitor.max-concurrency": "4", "health-monitor.allow-private": "true"})
	want := DefaultConfig()
	want.Enabled, want.ProbeInterval, want.MaxConcurrency, want.AllowPrivate = false, 250*time.Millisecond, 4, true
	if err != nil || got != want {
		t.Fatalf("got %+v %v, want %+v", got, err, want)
	}
	_, err = ReadConfig(options{"health-monitor.probe-interval": "10ms"})
	if err == nil || !strings.HasPrefix(err.Error(), "app.toml: health-monitor.probe-interval must be") {
		t.Fatalf("invalid interval: %v", err)
	}
	got, err = ReadConfig(options{"health-monitor.canary-enabled": "false", "health-monitor.canary-interval": "1m",
		"health-monitor.canary-suspect-interval": "5s", "health-monitor.canary-timeout": "20s", "health-monitor.canary-window": 32,
		"health-monitor.canary-min-samples": "8", "health-monitor.canary-ttl": "1h", "health-monitor.canary-max-concurrency": 128,
		"health-monitor.canary-baseline-pct": "2", "health-monitor.canary-degraded-pct": 40, "health-monitor.canary-alarm": "6000"})
	want = DefaultConfig()
	want.CanaryEnabled, want.CanaryInterval, want.CanarySuspectInterval, want.CanaryTimeout = false, time.Minute, 5*time.Second, 20*time.Second
	want.CanaryWindow, want.CanaryMinSamples, want.CanaryTTL, want.CanaryMaxConcurrency = 32, 8, time.Hour, 128
	want.CanaryBaselinePct, want.CanaryDegradedPct, want.CanaryAlarm = 2, 40, 6000
	if err != nil || got != want {
		t.Fatalf("canary keys: got %+v %v, want %+v", got, err, want)
	}
	// Each canary key's error names it.
	for k, v := range map[string]any{
		"canary-interval": "50ms", "canary-suspect-interval": "61s", "canary-timeout": "0s", "canary-window": 65,
		"canary-min-samples": 17, "canary-ttl": "1m", "canary-max-concurrency": 0,
	} {
		_, err := ReadConfig(options{"health-monitor." + k: v})
		if err == nil || !strings.HasPrefix(err.Error(), "app.toml: health-monitor."+k+" ") {
			t.Errorf("%s = %v: %v", k, v, err)
		}
	}
}

// The CUSUM keys: 1 <= baseline < degraded <= 99 percent, alarm in [1,
// 100000] milli-nats; each error names its key (the degraded rate's when
// the two are out of order) and the bound it broke; the bounds themselves
// are accepted and make a rule.
func TestReadConfigCusumKeys(t *testing.T) {
	bad := []struct {
		opts options
		key  string
		want string
	}{
		{options{"health-monitor.canary-baseline-pct": 0}, "canary-baseline-pct", "must be in [1, 98], got 0"},
		{options{"health-monitor.canary-baseline-pct": 99, "health-monitor.canary-degraded-pct": 99}, "canary-baseline-pct", "got 99"},
		{options{"health-monitor.canary-degraded-pct": 5}, "canary-degraded-pct", "must be in (canary-baseline-pct (5), 99], got 5"},
		{options{"health-monitor.canary-baseline-pct": 30}, "canary-degraded-pct", "(canary-baseline-pct (30), 99], got 25"},
		{options{"health-monitor.canary-degraded-pct": 100}, "canary-degraded-pct", "got 100"},
		{options{"health-monitor.canary-alarm": 0}, "canary-alarm", "must be in [1, 100000] milli-nats, got 0"},
		{options{"health-monitor.canary-alarm": "100001"}, "canary-alarm", "got 100001"},
	}
	for _, c := range bad {
		_, err := ReadConfig(c.opts)
		if err == nil || !strings.HasPrefix(err.Error(), "app.toml: health-monitor."+c.key+" ") || !strings.HasSuffix(err.Error(), c.want) {
			t.Errorf("%v: %v, want %s ... %s", c.opts, err, c.key, c.want)
		}
	}
	for _, o := range []options{
		{"health-monitor.canary-baseline-pct": 1, "health-monitor.canary-degraded-pct": 2, "health-monitor.canary-alarm": 1},
		{"health-monitor.canary-baseline-pct": 98, "health-monitor.canary-degraded-pct": 99, "health-monitor.canary-alarm": 100_000},
	} {
		cfg, err := ReadConfig(o)
		if err != nil {
			t.Fatalf("%v: %v", o, err)
		}
		if _, err := cfg.cusumRule(); err != nil {
			t.Fatalf("%v: valid keys, no rule: %v", o, err)
		}
	}
	r, err := DefaultConfig().cusumRule()
	if err != nil || r.Miss != 1_609 || r.OK != 236 || r.H != 4_000 {
		t.Fatalf("default rule %+v, %v: want +1609, -236, 4000", r, err)
	}
}
