package localnet

import "testing"

// The transfer-agent query's answer, as the REST server and the CLI write
// it: snake_case proto names, 64-bit counts as strings, a zero maybe left out.
func TestParseTransferAgent(t *testing.T) {
	bz := []byte(`{"agent":{"agent":{"address":"infer1x","bond":{"denom":"stake","amount":"1000000"},
		"registered_epoch":"0","standing":{"epoch_index":"2","starts":"31","finished":"20",
		"charged_misses":"11","corroborated_misses":0,"stopped_height":"57"}},
		"miss_allowance":"12","may_start":false}}`)
	v, err := ParseTransferAgent(bz)
	if err != nil {
		t.Fatal(err)
	}
	s := v.Agent.Standing
	if v.Agent.Address != "infer1x" || v.Agent.Bond.Amount != "1000000" || v.Agent.LeavingEpoch != 0 || v.MissAllowance != 12 || v.MayStart ||
		s.EpochIndex != 2 || s.Starts != 31 || s.Finished != 20 || s.ChargedMisses != 11 || s.CorroboratedMisses != 0 || s.StoppedHeight != 57 {
		t.Fatalf("parsed %+v", v)
	}
	if _, err := ParseTransferAgent([]byte(`{"agent":{"miss_allowance":"-1"}}`)); err == nil {
		t.Fatal("a negative count was accepted")
	}
}

func TestAgentKeysFollowTheConfig(t *testing.T) {
	n := &Net{t: t, cfg: Config{Agents: 2}}
	if got := n.AgentKeys(); len(got) != 2 || got[0] != "agent0" || got[1] != "agent1" {
		t.Fatalf("AgentKeys = %q", got)
	}
	if got := (&Net{t: t}).AgentKeys(); len(got) != scriptAgents {
		t.Fatalf("default AgentKeys = %q, want the script's %d", got, scriptAgents)
	}
}
