// Package metricsdoc reads the metric names that the operator docs and the
// alert rules use, for the tests that check them against what a node
// serves (app/rules_test.go without a node, tests/localnet with one).
package metricsdoc

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
)

// RulesFile is the alert rules, relative to the repository root.
const RulesFile = "docs/prometheus/rules.yml"

// Docs are the documents, relative to the repository root, whose metric
// names a node must serve.
var Docs = []string{
	"README.md",
	"docs/metrics.md",
	"docs/grafana-dashboard.json",
	"monitor/README.md",
	"abci/ve/README.md",
	"abci/proposals/README.md",
	"abci/preblock/README.md",
}

// metricRE matches a full metric name of CometBFT's or of the app's
// series (the docs' shorthand, "`_miss`", names no metric on its own).
var metricRE = regexp.MustCompile(`\b(?:cometbft|inference_(?:monitor|attestation|breaker))_[a-z0-9_]*[a-z0-9]`)

// docNames is every metric name in a document. A match followed by "_"
// is a prefix cut short by a pattern (`cometbft_consensus_(height|rounds)`
// in a grep), not a name.
func docNames(text string) []string {
	var out []string
	for _, loc := range metricRE.FindAllStringIndex(text, -1) {
		if loc[1] < len(text) && text[loc[1]] == '_' {
			continue
		}
		out = append(out, text[loc[0]:loc[1]])
	}
	return out
}

// Rule is one alerting rule.
type Rule struct {
	Alert string `yaml:"alert"`
	Expr  string `yaml:"expr"`
}

// Rules reads the alerting rules of the rules file under root.
func Rules(root string) ([]Rule, error) {
	bz, err := os.ReadFile(filepath.Join(root, RulesFile))
	if err != nil {
		return nil, fmt.Errorf("read rules: %w", err)
	}
	var file struct {
		Groups []struct {
			Rules []Rule `yaml:"rules"`
		} `yaml:"groups"`
	}
	if err := yaml.Unmarshal(bz, &file); err != nil {
		return nil, fmt.Errorf("parse %s: %w", RulesFile, err)
	}
	var out []Rule
	for _, g := range file.Groups {
		out = append(out, g.Rules...)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s has no rules", RulesFile)
	}
	return out, nil
}

// Names maps every metric name that Docs and the rules' expressions use
// to the first file that names it.
func Names(root string) (map[string]string, error) {
	out := map[string]string{}
	for _, doc := range Docs {
		bz, err := os.ReadFile(filepath.Join(root, doc))
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", doc, err)
		}
		for _, name := range docNames(string(bz)) {
			if _, ok := out[name]; !ok {
				out[name] = doc
			}
		}
	}
	rules, err := Rules(root)
	if err != nil {
		return nil, err
	}
	for _, r := range rules {
		for _, name := range Identifiers(r.Expr) {
			if _, ok := out[name]; !ok {
				out[name] = RulesFile + " (" + r.Alert + ")"
			}
		}
	}
	return out, nil
}

// promql are the words of PromQL that are not metric names: the functions,
// aggregations, operators and modifiers the rules use or may use.
var promql = map[string]bool{
	"abs": true, "absent": true, "absent_over_time": true, "and": true, "avg": true, "avg_over_time": true,
	"bool": true, "by": true, "ceil": true, "changes": true, "clamp_max": true, "clamp_min": true, "count": true,
	"count_over_time": true, "delta": true, "deriv": true, "floor": true, "group_left": true, "group_right": true,
	"histogram_quantile": true, "idelta": true, "ignoring": true, "increase": true, "irate": true, "label_replace": true,
	"max": true, "max_over_time": true, "min": true, "min_over_time": true, "offset": true, "on": true, "or": true,
	"quantile": true, "quantile_over_time": true, "rate": true, "resets": true, "round": true, "scalar": true,
	"sort": true, "sum": true, "sum_over_time": true, "time": true, "topk": true, "unless": true, "vector": true,
	"without": true,
}

var (
	// Label matchers, grouping labels, ranges and strings hold no metric.
	bracedRE  = regexp.MustCompile(`\{[^}]*\}|\[[^\]]*\]|"[^"]*"`)
	groupedRE = regexp.MustCompile(`\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)`)
	identRE   = regexp.MustCompile(`[A-Za-z_:][A-Za-z0-9_:]*`)
	numberRE  = regexp.MustCompile(`^(?:\d|[eE][+-]?\d|0x|Inf$|NaN$)`)
)

// Identifiers is what a PromQL expression reads as metric names, sorted:
// every identifier outside strings, label matchers, ranges and grouping
// clauses that is not a PromQL word. A placeholder such as `N-1` or
// `verdict-ttl` shows up here as the names N and verdict, ttl.
func Identifiers(expr string) []string {
	expr = groupedRE.ReplaceAllString(expr, "$1")
	expr = bracedRE.ReplaceAllString(expr, " ")
	var out []string
	for _, loc := range identRE.FindAllStringIndex(expr, -1) {
		word := expr[loc[0]:loc[1]]
		if promql[word] || (loc[0] > 0 && isDigit(expr[loc[0]-1])) || numberRE.MatchString(word) {
			continue // a function, keyword, or the exponent/unit of a number (1e3, 5m)
		}
		if !slices.Contains(out, word) {
			out = append(out, word)
		}
	}
	slices.Sort(out)
	return out
}

func isDigit(b byte) bool { return b >= '0' && b <= '9' || b == '.' }

// IsMetric reports whether name is one of the series families the docs
// and rules may name (CometBFT's or the app's).
func IsMetric(name string) bool {
	return strings.HasPrefix(name, "cometbft_") || strings.HasPrefix(name, "inference_")
}
