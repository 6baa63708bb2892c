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

const exportBeforeV3 = `{"app_state":{
 "inference":{
  "params":{"epoch_length":"1000"},
  "participants":[{"address":"p1","inference_url":"http://a","models":["m"],"weight":"130","status":"ACTIVE","bond":{"denom":"stake","amount":"1300000"},"current_epoch_stats":{"inference_count":"5","missed_requests":"1"}}],
  "inferences":[{"transfer_agent":"a","inference_id":"done","status":"INFERENCE_STATUS_FINISHED","executor":"p1"}],
  "executor_health":[{"address":"p1","state":"HEALTH_STATE_EXCLUDED","attested_miss_at":"86"}],
  "epoch":{"index":"1"}},
 "bank":{"balances":[{"address":"x","coins":[{"denom":"stake","amount":"10"}]}],"supply":[{"denom":"stake","amount":"10"}]}}}`

const exportAfterV3 = `{"app_state":{
 "inference":{
  "params":{"epoch_length":"1000"},
  "participants":[{"address":"p1","inference_url":"http://a","models":["m"],"weight":"130","status":"ACTIVE","bond":{"denom":"stake","amount":"1300000"},"current_epoch_stats":{"inference_count":"6","missed_requests":"1"}}],
  "inferences":[{"transfer_agent":"a","inference_id":"done","status":"INFERENCE_STATUS_FINISHED","executor":"p1"}],
  "executor_health":[{"address":"p1","state":"HEALTH_STATE_EXCLUDED","attested_miss_at":"87"}],
  "epoch":{"index":"1"},
  "bundle_v3_height":"88"},
 "bank":{"balances":[{"address":"x","coins":[{"denom":"stake","amount":"10"}]}],"supply":[{"denom":"stake","amount":"10"}]}}}`

// The v3 comparison passes an upgrade that only recorded the switch
// height, and names each way one could lose or change what it must keep.
func TestCompareExportsV3(t *testing.T) {
	cases := []struct {
		name       string
		edit       func(after string) string
		wantReport string // "" = no problem
	}{
		{"as the migration says", func(s string) string { return s }, ""},
		{"no switch height", func(s string) string {
			return strings.Replace(s, `,
  "bundle_v3_height":"88"`, "", 1)
		}, "bundle_v3_height after the upgrade"},
		{"the switch at the upgrade height itself", func(s string) string {
			return strings.Replace(s, `"bundle_v3_height":"88"`, `"bundle_v3_height":"87"`, 1)
		}, "want 88"},
		{"a weight changed", func(s string) string { return strings.Replace(s, `"weight":"130"`, `"weight":"100"`, 1) }, "participant p1 weight"},
		{"a bond changed", func(s string) string { return strings.Replace(s, `"amount":"1300000"`, `"amount":"0"`, 1) }, "participant p1 bond"},
		{"stats went down", func(s string) string { return strings.Replace(s, `"inference_count":"6"`, `"inference_count":"4"`, 1) }, "inference_count went down"},
		{"a param changed", func(s string) string { return strings.Replace(s, `"epoch_length":"1000"`, `"epoch_length":"999"`, 1) }, "param epoch_length"},
		{"a participant lost", func(s string) string {
			return strings.Replace(s, `"address":"p1","inference_url"`, `"address":"p2","inference_url"`, 1)
		}, "participant p1 lost"},
		{"a breaker record lost", func(s string) string {
			return strings.Replace(s, `"address":"p1","state"`, `"address":"p9","state"`, 1)
		}, "breaker record of p1 lost"},
		{"a balance changed", func(s string) string {
			return strings.Replace(s, `"coins":[{"denom":"stake","amount":"10"}]`, `"coins":[{"denom":"stake","amount":"9"}]`, 1)
		}, "balance of x"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := compareExportsV3([]byte(exportBeforeV3), []byte(tc.edit(exportAfterV3)), 87)
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
	if got := recordField([]byte(exportAfterV3), "p1", "attested_miss_at"); got != "87" {
		t.Fatalf("attested_miss_at of p1: %q", got)
	}
}
