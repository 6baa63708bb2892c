package app

import (
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/inferenced/inferenced/abci/ve"
	"github.com/inferenced/inferenced/appmetrics/metricsdoc"
	"github.com/inferenced/inferenced/monitor"
)

const repoRoot = ".."

// Every name an operator reads in the docs or alerts on in the rules is a
// series the node serves from its start (before any event), so no panel or
// alert is silently empty on a healthy chain. CometBFT's names are checked
// on a running node (tests/localnet).
func TestDocumentedAppMetricsAreServedFromStart(t *testing.T) {
	served := servedAtStart(t)
	names, err := metricsdoc.Names(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for name, where := range names {
		if !strings.HasPrefix(name, "inference_") {
			continue
		}
		checked++
		if _, ok := served[name]; !ok {
			t.Errorf("%s (named in %s) is not served", name, where)
		}
	}
	if checked < 30 {
		t.Fatalf("only %d app metrics found in the docs and rules: is metricsdoc reading them?", checked)
	}
}

// A placeholder in an expression (`N-1`, `verdict-ttl`) is parsed as a
// metric name: the rule loads and can never fire.
func TestRulesNameOnlyMetrics(t *testing.T) {
	rules, err := metricsdoc.Rules(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rules {
		ids := metricsdoc.Identifiers(r.Expr)
		if len(ids) == 0 {
			t.Errorf("%s reads no metric: %s", r.Alert, r.Expr)
		}
		for _, id := range ids {
			if !metricsdoc.IsMetric(id) {
				t.Errorf("%s: %q is no metric (a placeholder?) in %s", r.Alert, id, r.Expr)
			}
		}
	}
}

// localnetDefault reads a default of scripts/localnet.sh (VAR=${VAR:-n}),
// the deployment the rules' deployment-dependent values are for.
func localnetDefault(t *testing.T, name string) int {
	t.Helper()
	bz, err := os.ReadFile(repoRoot + "/scripts/localnet.sh")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^` + name + `=\$\{` + name + `:-(\d+)\}$`).FindSubmatch(bz)
	if m == nil {
		t.Fatalf("no default for %s in scripts/localnet.sh", name)
	}
	n, err := strconv.Atoi(string(m[1]))
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// The thresholds the rules file derives from the code's defaults are
// those defaults: a changed default shows here, not as an alert that fires
// on a healthy node or never.
func TestRuleThresholdsAreTheDefaults(t *testing.T) {
	rules, err := metricsdoc.Rules(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	exprs := map[string]string{}
	for _, r := range rules {
		exprs[r.Alert] = strings.TrimSpace(r.Expr)
	}
	cfg := monitor.DefaultConfig()
	want := map[string]string{
		"MonitorScheduleLag": fmt.Sprintf("inference_monitor_schedule_lag_seconds > %g", cfg.ProbeInterval.Seconds()),
		"VerdictsOld":        fmt.Sprintf("inference_monitor_oldest_verdict_age_seconds > %g", cfg.VerdictTTL.Seconds()),
		"ProbesSlow":         fmt.Sprintf(`inference_monitor_probe_latency{quantile="0.99"} > %d`, cfg.ProbeTimeout.Milliseconds()/2),
		"ExtensionGrowing": fmt.Sprintf("inference_attestation_extension_size_bytes > %d",
			ve.MaxSize(localnetDefault(t, "NUM_EXECUTORS"))*8/10),
		"PeersLost": fmt.Sprintf("cometbft_p2p_peers < %d", localnetDefault(t, "NUM_VALIDATORS")-1),
	}
	for alert, expr := range want {
		if exprs[alert] != expr {
			t.Errorf("%s: %q, want %q", alert, exprs[alert], expr)
		}
	}
}
