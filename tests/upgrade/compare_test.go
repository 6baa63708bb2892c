package upgrade_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/big"
	"slices"
	"strings"
	"testing"
)

// export is the part of a genesis export the upgrade must carry over.
type export struct {
	AppState struct {
		Inference struct {
			Params         map[string]json.RawMessage   `json:"params"`
			Participants   []map[string]json.RawMessage `json:"participants"`
			Inferences     []map[string]json.RawMessage `json:"inferences"`
			ExecutorHealth []map[string]json.RawMessage `json:"executor_health"`
			Epoch          json.RawMessage              `json:"epoch"`
			BundleV3Height json.RawMessage              `json:"bundle_v3_height"`
		} `json:"inference"`
		Auth struct {
			Params   map[string]json.RawMessage   `json:"params"`
			Accounts []map[string]json.RawMessage `json:"accounts"`
		} `json:"auth"`
		Staking struct {
			Params     map[string]json.RawMessage   `json:"params"`
			Validators []map[string]json.RawMessage `json:"validators"`
		} `json:"staking"`
		Bank struct {
			Balances []struct {
				Address string          `json:"address"`
				Coins   json.RawMessage `json:"coins"`
			} `json:"balances"`
			Supply json.RawMessage `json:"supply"`
		} `json:"bank"`
	} `json:"app_state"`
}

// comparison is what compareExports found: a summary line per part and
// every departure from what the migration promises.
type comparison struct {
	Summary, Problems []string
}

func (c *comparison) problem(format string, args ...any) {
	c.Problems = append(c.Problems, fmt.Sprintf(format, args...))
}

// report logs the summary and fails t with every problem.
func (c comparison) report(t *testing.T) {
	t.Helper()
	for _, line := range c.Summary {
		t.Logf("export diff: %s", line)
	}
	for _, p := range c.Problems {
		t.Errorf("export diff: %s", p)
	}
}

// pairs calls same for every record of before (identified by its field
// key) with its counterpart in after, reports each one lost and a change in
// their number, and returns how many it paired.
func (c *comparison) pairs(what, key string, before, after []map[string]json.RawMessage,
	same func(id string, b, a map[string]json.RawMessage),
) int {
	byID := index(after, key)
	kept := 0
	for _, b := range before {
		id := str(b[key])
		a, ok := byID[id]
		if !ok {
			c.problem("%s %s lost", what, id)
			continue
		}
		kept++
		same(id, b, a)
	}
	if len(after) != len(before) {
		c.problem("%d %ss before, %d after", len(before), what, len(after))
	}
	return kept
}

// statsNeverLower reports a participant whose epoch stats went down.
func (c *comparison) statsNeverLower(addr string, p, q map[string]json.RawMessage) {
	for _, k := range []string{"inference_count", "missed_requests"} {
		if num(field(q["current_epoch_stats"], k)).Cmp(num(field(p["current_epoch_stats"], k))) < 0 {
			c.problem("participant %s %s went down: %s -> %s", addr, k, field(p["current_epoch_stats"], k), field(q["current_epoch_stats"], k))
		}
	}
}

// decodeExports reads the exports before and after an upgrade.
func decodeExports(beforeJSON, afterJSON []byte) (before, after export, err error) {
	if err := json.Unmarshal(beforeJSON, &before); err != nil {
		return export{}, export{}, fmt.Errorf("export before: %w", err)
	}
	if err := json.Unmarshal(afterJSON, &after); err != nil {
		return export{}, export{}, fmt.Errorf("export after: %w", err)
	}
	return before, after, nil
}

// compareExports checks an export taken with the previous release at the
// last height before the upgrade against one taken with this release at
// the upgrade height, as docs/upgrade.md says the migration goes: params
// keep their values and gain the new fields at defaults; every participant
// stays, unbonded, its weight capped to what the minimum bond backs, its
// stats never lower; every inference stays (a closed one exactly, an open
// one open or closed by the upgrade block); every breaker record stays;
// every balance and the supply are unchanged (fees are 0 here, and nothing
// mints).
func compareExports(beforeJSON, afterJSON []byte, defaults map[string]json.RawMessage) (comparison, error) {
	before, after, err := decodeExports(beforeJSON, afterJSON)
	if err != nil {
		return comparison{}, err
	}
	var c comparison
	compareParams(&c, before.AppState.Inference.Params, after.AppState.Inference.Params, defaults)
	compareParticipants(&c, before.AppState.Inference.Participants, after.AppState.Inference.Participants, participantCap(after.AppState.Inference.Params))
	compareInferences(&c, before.AppState.Inference.Inferences, after.AppState.Inference.Inferences)
	compareRecords(&c, before.AppState.Inference.ExecutorHealth, after.AppState.Inference.ExecutorHealth)
	if !jsonEqual(before.AppState.Inference.Epoch, after.AppState.Inference.Epoch) {
		c.problem("epoch changed: %s -> %s", before.AppState.Inference.Epoch, after.AppState.Inference.Epoch)
	}
	compareBalances(&c, before, after)
	return c, nil
}

// recordField is field k of executor addr's breaker record in an export
// ("" when it has none).
func recordField(exportJSON []byte, addr, k string) string {
	var e export
	if json.Unmarshal(exportJSON, &e) != nil {
		return ""
	}
	for _, r := range e.AppState.Inference.ExecutorHealth {
		if str(r["address"]) == addr {
			return str(r[k])
		}
	}
	return ""
}

func compareParams(c *comparison, before, after, defaults map[string]json.RawMessage) {
	added := 0
	for _, k := range sortedKeys(before) {
		if !jsonEqual(before[k], after[k]) {
			c.problem("param %s: %s -> %s", k, before[k], after[k])
		}
	}
	for _, k := range sortedKeys(after) {
		if _, ok := before[k]; ok {
			continue
		}
		added++
		if !jsonEqual(after[k], defaults[k]) {
			c.problem("new param %s = %s, default %s", k, after[k], defaults[k])
		}
	}
	c.Summary = append(c.Summary, fmt.Sprintf("params: %d kept, %d new at their defaults", len(before), added))
}

// participantCap is the weight an unbonded participant keeps: what the
// minimum bond backs (types.WeightCap), at least 1.
func participantCap(params map[string]json.RawMessage) *big.Int {
	var minBond struct{ Amount string }
	var perWeight string
	_ = json.Unmarshal(params["participant_min_bond"], &minBond)
	_ = json.Unmarshal(params["participant_bond_per_weight"], &perWeight)
	bond, ok1 := new(big.Int).SetString(minBond.Amount, 10)
	per, ok2 := new(big.Int).SetString(perWeight, 10)
	if !ok1 || !ok2 || per.Sign() <= 0 {
		return big.NewInt(1)
	}
	return bigMax(big.NewInt(1), new(big.Int).Quo(bond, per))
}

func compareParticipants(c *comparison, before, after []map[string]json.RawMessage, capWeight *big.Int) {
	var weights []string
	kept := c.pairs("participant", "address", before, after, func(addr string, p, q map[string]json.RawMessage) {
		for _, k := range []string{"inference_url", "models", "poc_available", "status", "registered_height"} {
			if !jsonEqual(p[k], q[k]) {
				c.problem("participant %s %s: %s -> %s", addr, k, p[k], q[k])
			}
		}
		want := bigMax(big.NewInt(1), bigMin(num(p["weight"]), capWeight))
		if got := num(q["weight"]); got.Cmp(want) != 0 {
			c.problem("participant %s weight %s -> %s, want %s", addr, num(p["weight"]), got, want)
		}
		if str(field(q["bond"], "amount")) != "0" {
			c.problem("participant %s bond %s, want none", addr, compact(q["bond"]))
		}
		c.statsNeverLower(addr, p, q)
		weights = append(weights, fmt.Sprintf("%s->%s", num(p["weight"]), num(q["weight"])))
	})
	c.Summary = append(c.Summary, fmt.Sprintf("participants: %d of %d kept, unbonded, weights %s (cap %s)",
		kept, len(before), strings.Join(weights, " "), capWeight))
}

func compareInferences(c *comparison, before, after []map[string]json.RawMessage) {
	key := func(m map[string]json.RawMessage) string {
		return str(m["transfer_agent"]) + "/" + str(m["inference_id"])
	}
	byKey := map[string]map[string]json.RawMessage{}
	for _, m := range after {
		byKey[key(m)] = m
	}
	open, stillOpen, closedAtUpgrade := 0, 0, 0
	for _, m := range before {
		q, ok := byKey[key(m)]
		if !ok {
			c.problem("inference %s lost", key(m))
			continue
		}
		if str(m["status"]) != "INFERENCE_STATUS_STARTED" {
			if !mapsEqual(m, q) {
				c.problem("closed inference %s changed", key(m))
			}
			continue
		}
		open++
		if str(q["status"]) == "INFERENCE_STATUS_STARTED" {
			stillOpen++
		} else {
			closedAtUpgrade++
		}
		for _, k := range []string{"executor", "model", "start_height", "expiration_height", "prompt_hash"} {
			if !jsonEqual(m[k], q[k]) {
				c.problem("open inference %s %s: %s -> %s", key(m), k, m[k], q[k])
			}
		}
	}
	c.Summary = append(c.Summary, fmt.Sprintf("inferences: %d before, %d after; %d open at the halt: %d still open, %d closed in the upgrade block",
		len(before), len(after), open, stillOpen, closedAtUpgrade))
}

func compareRecords(c *comparison, before, after []map[string]json.RawMessage) {
	byAddr := index(after, "address")
	var states []string
	for _, r := range before {
		addr := str(r["address"])
		q, ok := byAddr[addr]
		if !ok {
			c.problem("breaker record of %s lost", addr)
			continue
		}
		states = append(states, fmt.Sprintf("%s->%s", shortState(r["state"]), shortState(q["state"])))
	}
	c.Summary = append(c.Summary, fmt.Sprintf("breaker records: %d before, %d after (%s)", len(before), len(after), strings.Join(states, " ")))
}

func compareBalances(c *comparison, before, after export) {
	got := map[string]json.RawMessage{}
	for _, b := range after.AppState.Bank.Balances {
		got[b.Address] = b.Coins
	}
	for _, b := range before.AppState.Bank.Balances {
		if !jsonEqual(b.Coins, got[b.Address]) {
			c.problem("balance of %s: %s -> %s", b.Address, b.Coins, got[b.Address])
		}
	}
	if len(after.AppState.Bank.Balances) != len(before.AppState.Bank.Balances) {
		c.problem("%d balances before, %d after", len(before.AppState.Bank.Balances), len(after.AppState.Bank.Balances))
	}
	if !jsonEqual(before.AppState.Bank.Supply, after.AppState.Bank.Supply) {
		c.problem("supply %s -> %s", before.AppState.Bank.Supply, after.AppState.Bank.Supply)
	}
	c.Summary = append(c.Summary, fmt.Sprintf("balances: %d accounts, all equal, supply %s", len(before.AppState.Bank.Balances), compact(before.AppState.Bank.Supply)))
}

func shortState(raw json.RawMessage) string { return strings.TrimPrefix(str(raw), "HEALTH_STATE_") }

func index(ms []map[string]json.RawMessage, k string) map[string]map[string]json.RawMessage {
	out := make(map[string]map[string]json.RawMessage, len(ms))
	for _, m := range ms {
		out[str(m[k])] = m
	}
	return out
}

func str(raw json.RawMessage) string {
	var s string
	_ = json.Unmarshal(raw, &s)
	return s
}

// num reads a proto-JSON integer (a string) or 0.
func num(raw json.RawMessage) *big.Int {
	v, ok := new(big.Int).SetString(str(raw), 10)
	if !ok {
		return new(big.Int)
	}
	return v
}

func field(raw json.RawMessage, k string) json.RawMessage {
	var m map[string]json.RawMessage
	_ = json.Unmarshal(raw, &m)
	return m[k]
}

// compact is raw without the export's indentation, for a log line.
func compact(raw json.RawMessage) string {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return string(raw)
	}
	return b.String()
}

func jsonEqual(a, b json.RawMessage) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return bytes.Equal(a, b)
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return bytes.Equal(xa, ya)
}

func mapsEqual(a, b map[string]json.RawMessage) bool {
	ab, _ := json.Marshal(a)
	bb, _ := json.Marshal(b)
	return jsonEqual(ab, bb)
}

func sortedKeys(m map[string]json.RawMessage) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func bigMin(a, b *big.Int) *big.Int {
	if a.Cmp(b) < 0 {
		return a
	}
	return b
}

func bigMax(a, b *big.Int) *big.Int {
	if a.Cmp(b) > 0 {
		return a
	}
	return b
}
