package types_test

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"testing"

	"github.com/inferenced/inferenced/x/inference/types"
)

// TestReadmeParamsTableMatchesDefaults: the README's table of breaker
// params states the chain's defaults (a default changed in code and not in
// the operators' table is a lie to them).
func TestReadmeParamsTableMatchesDefaults(t *testing.T) {
	readme, err := os.ReadFile("../../../README.md")
	if err != nil {
		t.Fatalf("read README: %v", err)
	}
	raw, err := json.Marshal(types.DefaultParams())
	if err != nil {
		t.Fatal(err)
	}
	var defaults map[string]any
	if err := json.Unmarshal(raw, &defaults); err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile("(?m)^\\| `(health_cb_[a-z_]+)`[^|]*\\| ([^ |]+) \\|")
	rows := row.FindAllStringSubmatch(string(readme), -1)
	if len(rows) < 12 {
		t.Fatalf("found %d breaker param rows in the README, want the whole table", len(rows))
	}
	for _, r := range rows {
		name, stated := r[1], r[2]
		v, ok := defaults[name]
		if !ok {
			t.Errorf("README lists %s, which Params does not have", name)
			continue
		}
		if got := fmt.Sprint(v); got != stated {
			t.Errorf("README says %s defaults to %s; DefaultParams has %s", name, stated, got)
		}
	}
}
