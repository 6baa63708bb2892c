package upgrade_test

import (
	"encoding/json"
	"strings"
	"testing"
)

const exportBefore = `{"app_state":{
 "inference":{
  "params":{"epoch_length":"1000"},
  "participants":[{"address":"p1","inference_url":"http://a","models":["m"],"weight":"130","status":"ACTIVE","current_epoch_stats":{"inference_count":"5","missed_requests":"1"}}],
  "inferences":[
   {"transfer_agent":"a","inference_id":"done","status":"INFERENCE_STATUS_FINISHED","executor":"p1"},
   {"transfer_agent":"a","inference_id":"open","status":"INFERENCE_STATUS_STARTED","executor":"p1","expiration_height":"70"}],
  "executor_health":[{"address":"p1","state":"HEALTH_STATE_EXCLUDED"}],
  "epoch":{"index":"1"}},
 "bank":{"balances":[{"address":"x","coins":[{"denom":"stake","amount":"10"}]}],"supply":[{"denom":"stake","amount":"10"}]}}}`

const exportAfter = `{"app_state":{
 "inference":{
  "params":{"epoch_length":"1000","participant_min_bond":{"denom":"stake","amount":"1000000"},"participant_bond_per_weight":"10000"},
  "participants":[{"address":"p1","inference_url":"http://a","models":["m"],"weight":"100","status":"ACTIVE","bond":{"denom":"stake","amount":"0"},"current_epoch_stats":{"inference_count":"6","missed_requests":"1"}}],
  "inferences":[
   {"transfer_agent":"a","inference_id":"open","status":"INFERENCE_STATUS_EXPIRED","executor":"p1","expiration_height":"70"},
   {"transfer_agent":"a","inference_id":"done","status":"INFERENCE_STATUS_FINISHED","executor":"p1"}],
  "executor_health":[{"address":"p1","state":"HEALTH_STATE_PROBE"}],
  "epoch":{"index":"1"}},
 "bank":{"balances":[{"address":"x","coins":[{"denom":"stake","amount":"10"}]}],"supply":[{"denom":"stake","amount":"10"}]}}}`

var exportDefaults = map[string]json.RawMessage{
	"participant_min_bond":        json.RawMessage(`{"denom":"stake","amount":"1000000"}`),
	"participant_bond_per_weight": json.RawMessage(`"10000"`),
}

// The comparison passes an upgrade that did what the migration says, and
// names each way one could lose or change what it must keep.
func TestCompareExports(t *testing.T) {
	cases := []struct {
		name       string
		edit       func(after string) string
		wantReport string // "" = no problem
	}{
		{"as the migration says", func(s string) string { return s }, ""},
		{"a participant lost", func(s string) string {
			return strings.Replace(s, `"address":"p1","inference_url"`, `"address":"p2","inference_url"`, 1)
		}, "participant p1 lost"},
		{"a weight not capped", func(s string) string { return strings.Replace(s, `"weight":"100"`, `"weight":"130"`, 1) }, "weight 130 -> 130, want 100"},
		{"stats went down", func(s string) string { return strings.Replace(s, `"inference_count":"6"`, `"inference_count":"4"`, 1) }, "inference_count went down"},
		{"a new param not at its default", func(s string) string {
			return strings.Replace(s, `"participant_bond_per_weight":"10000"`, `"participant_bond_per_weight":"7"`, 1)
		}, "new param participant_bond_per_weight"},
		{"a kept param changed", func(s string) string { return strings.Replace(s, `"epoch_length":"1000"`, `"epoch_length":"999"`, 1) }, "param epoch_length"},
		{"an open inference lost", func(s string) string { return strings.Replace(s, `"inference_id":"open"`, `"inference_id":"gone"`, 1) }, "inference a/open lost"},
		{"a closed inference changed", func(s string) string {
			return strings.Replace(s, `"INFERENCE_STATUS_FINISHED"`, `"INFERENCE_STATUS_EXPIRED"`, 1)
		}, "closed inference a/done changed"},
		{"a breaker record lost", func(s string) string {
			return strings.Replace(s, `"address":"p1","state"`, `"address":"p9","state"`, 1)
		}, "breaker record of p1 lost"},
		{"a balance changed", func(s string) string {
			return strings.Replace(s, `"coins":[{"denom":"stake","amount":"10"}]`, `"coins":[{"denom":"stake","amount":"9"}]`, 1)
		}, "balance of x"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := compareExports([]byte(exportBefore), []byte(tc.edit(exportAfter)), exportDefaults)
			if err != nil {
				t.Fatal(err)
			}
			report := strings.Join(c.Problems, "\n")
			switch {
			case tc.wantReport == "" && report != "":
				t.Fatalf("problems reported for a clean upgrade:\n%s", report)
			case tc.wantReport != "" && !strings.Contains(report, tc.wantReport):
				t.Fatalf("report %q does not name %q", report, tc.wantReport)
			}
		})
	}
}

const exportBeforeV4 = `{"app_state":{
 "inference":{
  "params":{"epoch_length":"1000"},
  "participants":[{"address":"p1","inference_url":"http://a","models":["m"],"weight":"130","status":"ACTIVE","bond":{"denom":"stake","amount":"1300000"},"current_epoch_stats":{"inference_count":"5","missed_requests":"1"}}],
  "inferences":[{"transfer_agent":"a","inference_id":"done","status":"INFERENCE_STATUS_FINISHED","executor":"p1"}],
  "executor_health":[{"address":"p1","state":"HEALTH_STATE_EXCLUDED","attested_miss_at":"86"}],
  "epoch":{"index":"1"},
  "bundle_v3_height":"40"},
 "auth":{"params":{"max_memo_characters":"256","sig_verify_cost_secp256k1":"1000"},
  "accounts":[{"@type":"/cosmos.auth.v1beta1.BaseAccount","address":"x"},
   {"@type":"/cosmos.auth.v1beta1.ModuleAccount","base_account":{"address":"g"},"name":"gov","permissions":["burner"]}]},
 "staking":{"params":{"bond_denom":"stake","max_validators":100},
  "validators":[{"operator_address":"v1","consensus_pubkey":{"key":"K1"},"tokens":"100","status":"BOND_STATUS_BONDED","jailed":false}]},
 "bank":{"balances":[{"address":"x","coins":[{"denom":"stake","amount":"10"}]}],"supply":[{"denom":"stake","amount":"10"}]}}}`

const exportAfterV4 = `{"app_state":{
 "inference":{
  "params":{"epoch_length":"1000"},
  "participants":[{"address":"p1","inference_url":"http://a","models":["m"],"weight":"130","status":"ACTIVE","bond":{"denom":"stake","amount":"1300000"},"current_epoch_stats":{"inference_count":"6","missed_requests":"1"}}],
  "inferences":[{"transfer_agent":"a","inference_id":"done","status":"INFERENCE_STATUS_FINISHED","executor":"p1"}],
  "executor_health":[{"address":"p1","state":"HEALTH_STATE_EXCLUDED","attested_miss_at":"87"}],
  "epoch":{"index":"1"},
  "bundle_v3_height":"40"},
 "auth":{"params":{"max_memo_characters":"256","sig_verify_cost_secp256k1":"1000","sig_verify_cost_mldsa65":"2000"},
  "accounts":[{"@type":"/cosmos.auth.v1beta1.BaseAccount","address":"x"},
   {"@type":"/cosmos.auth.v1beta1.ModuleAccount","base_account":{"address":"g"},"name":"gov","permissions":["burner"]},
   {"@type":"/cosmos.auth.v1beta1.ModuleAccount","base_account":{"address":"k"},"name":"key_rotation_fee_pool","permissions":["burner"]}]},
 "staking":{"params":{"bond_denom":"stake","max_validators":100,"key_rotation_fee":{"denom":"stake","amount":"1000000"}},
  "validators":[{"operator_address":"v1","consensus_pubkey":{"key":"K1"},"tokens":"100","status":"BOND_STATUS_BONDED","jailed":false}]},
 "bank":{"balances":[{"address":"x","coins":[{"denom":"stake","amount":"10"}]}],"supply":[{"denom":"stake","amount":"10"}]}}}`

// The v4 comparison passes an upgrade that did what the SDK v0.55 move
// says, and names each way one could lose or change what it must keep.
func TestCompareExportsV4(t *testing.T) {
	cases := []struct {
		name       string
		edit       func(after string) string
		wantReport string // "" = no problem
	}{
		{"as the migrations say", func(s string) string { return s }, ""},
		{"the switch height moved", func(s string) string {
			return strings.Replace(s, `"bundle_v3_height":"40"`, `"bundle_v3_height":"88"`, 1)
		}, "bundle_v3_height"},
		{"a bond changed", func(s string) string { return strings.Replace(s, `"amount":"1300000"`, `"amount":"0"`, 1) }, "participant p1 bond"},
		{"stats went down", func(s string) string { return strings.Replace(s, `"inference_count":"6"`, `"inference_count":"4"`, 1) }, "inference_count went down"},
		{"a param changed", func(s string) string { return strings.Replace(s, `"epoch_length":"1000"`, `"epoch_length":"999"`, 1) }, "param epoch_length"},
		{"a breaker record lost", func(s string) string {
			return strings.Replace(s, `"address":"p1","state"`, `"address":"p9","state"`, 1)
		}, "breaker record of p1 lost"},
		{"no ML-DSA cost", func(s string) string { return strings.Replace(s, `,"sig_verify_cost_mldsa65":"2000"`, "", 1) }, "sig_verify_cost_mldsa65 after the upgrade"},
		{"an auth param changed", func(s string) string {
			return strings.Replace(s, `"max_memo_characters":"256","sig_verify_cost_secp256k1":"1000","sig`, `"max_memo_characters":"512","sig_verify_cost_secp256k1":"1000","sig`, 1)
		}, "auth param max_memo_characters"},
		{"a fee in another denom", func(s string) string {
			return strings.Replace(s, `"key_rotation_fee":{"denom":"stake"`, `"key_rotation_fee":{"denom":"other"`, 1)
		}, "key_rotation_fee after the upgrade"},
		{"a staking param changed", func(s string) string {
			return strings.Replace(s, `"max_validators":100,"key`, `"max_validators":5,"key`, 1)
		}, "staking param max_validators"},
		{"a consensus key changed", func(s string) string { return strings.Replace(s, `{"key":"K1"}`, `{"key":"K2"}`, 1) }, "validator v1 consensus_pubkey"},
		{"no fee pool", func(s string) string {
			return strings.Replace(s, `"name":"key_rotation_fee_pool"`, `"name":"other"`, 1)
		}, "no key_rotation_fee_pool"},
		{"a fee pool that cannot burn", func(s string) string {
			return strings.Replace(s, `"name":"key_rotation_fee_pool","permissions":["burner"]`, `"name":"key_rotation_fee_pool","permissions":[]`, 1)
		}, "key_rotation_fee_pool permissions"},
		{"a module account lost", func(s string) string { return strings.Replace(s, `{"address":"g"}`, `{"address":"h"}`, 1) }, "account g lost"},
		{"a balance changed", func(s string) string {
			return strings.Replace(s, `"coins":[{"denom":"stake","amount":"10"}]`, `"coins":[{"denom":"stake","amount":"9"}]`, 1)
		}, "balance of x"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := compareExportsV4([]byte(exportBeforeV4), []byte(tc.edit(exportAfterV4)))
			if err != nil {
				t.Fatal(err)
			}
			report := strings.Join(c.Problems, "\n")
			switch {
			case tc.wantReport == "" && report != "":
				t.Fatalf("problems reported for a clean upgrade:\n%s", report)
			case tc.wantReport != "" && !strings.Contains(report, tc.wantReport):
				t.Fatalf("report %q does not name %q", report, tc.wantReport)
			}
		})
	}
	if got := recordField([]byte(exportAfterV4), "p1", "attested_miss_at"); got != "87" {
		t.Fatalf("attested_miss_at of p1: %q", got)
	}
}
