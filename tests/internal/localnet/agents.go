package localnet

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
)

// Key names scripts/localnet.sh gives the accounts of the transfer-agent
// scenarios (its header lists them): the griefer is a registered agent, the
// outsider a funded account that is not one.
const (
	GrieferKey  = "griefer"
	OutsiderKey = "outsider"
)

// AgentKey is the key name of the load driver's registered agent k
// (agent0 ..), as scripts/localnet.sh names it.
func AgentKey(k int) string { return "agent" + strconv.Itoa(k) }

// AgentKeys lists the key names of the network's registered load-driver
// agents (Config.Agents of them), in the order the driver plays them.
func (n *Net) AgentKeys() []string {
	keys := make([]string, n.cfg.agents())
	for k := range keys {
		keys[k] = AgentKey(k)
	}
	return keys
}

// AgentAddr is the address of the load driver's agent k.
func (n *Net) AgentAddr(k int) string {
	n.t.Helper()
	if k < 0 || k >= n.cfg.agents() {
		n.t.Fatalf("agent %d: the network has agents 0..%d", k, n.cfg.agents()-1)
	}
	return n.KeyAddress(AgentKey(k))
}

// Uint is an unsigned count from the chain's JSON, which writes 64-bit
// integers as strings and may leave a zero out.
type Uint uint64

// UnmarshalJSON accepts "12", 12 and null.
func (u *Uint) UnmarshalJSON(bz []byte) error {
	bz = bytes.Trim(bz, `"`)
	if len(bz) == 0 || string(bz) == "null" {
		*u = 0
		return nil
	}
	v, err := strconv.ParseUint(string(bz), 10, 64)
	if err != nil {
		return fmt.Errorf("not a count: %q", bz)
	}
	*u = Uint(v)
	return nil
}

// AgentStandingJSON is an agent's standing in one epoch (agent.proto).
type AgentStandingJSON struct {
	EpochIndex         Uint `json:"epoch_index"`
	Starts             Uint `json:"starts"`
	Finished           Uint `json:"finished"`
	ChargedMisses      Uint `json:"charged_misses"`
	CorroboratedMisses Uint `json:"corroborated_misses"`
	StoppedHeight      Uint `json:"stopped_height"` // 0: not stopped
}

// TransferAgentJSON is a registered transfer agent (agent.proto).
type TransferAgentJSON struct {
	Address string `json:"address"`
	Bond    struct {
		Denom  string `json:"denom"`
		Amount string `json:"amount"`
	} `json:"bond"`
	RegisteredEpoch Uint              `json:"registered_epoch"`
	LeavingEpoch    Uint              `json:"leaving_epoch"`
	Standing        AgentStandingJSON `json:"standing"`
}

// TransferAgentView is an agent as the transfer-agent query shows it: the
// record, its standing this epoch, and what that standing allows.
type TransferAgentView struct {
	Agent         TransferAgentJSON `json:"agent"`
	MissAllowance Uint              `json:"miss_allowance"`
	MayStart      bool              `json:"may_start"`
}

// transferAgentResponse is QueryTransferAgentResponse.
type transferAgentResponse struct {
	Agent TransferAgentView `json:"agent"`
}

// TransferAgent reads a registered agent over REST (node 0); an address
// that is not an agent is an error.
func (n *Net) TransferAgent(addr string) (TransferAgentView, error) {
	return n.TransferAgentAt(0, addr, 0)
}

// TransferAgentAt reads a registered agent on validator i's REST server as
// of block height (0: the latest).
func (n *Net) TransferAgentAt(i int, addr string, height int64) (TransferAgentView, error) {
	var res transferAgentResponse
	err := getJSONAt(n.REST(i)+"/inferenced/inference/v1/transfer_agents/"+addr, height, &res)
	return res.Agent, err
}

// ParseTransferAgent decodes the transfer-agent query's answer, from REST
// or from `inferenced q inference transfer-agent <addr> -o json`.
func ParseTransferAgent(bz []byte) (TransferAgentView, error) {
	var res transferAgentResponse
	err := json.Unmarshal(bz, &res)
	return res.Agent, err
}

// StartInference sends one MsgStartInference from key through the CLI
// (`tx inference start-inference`) and waits for its block. It returns the
// code and the chain's error text: 0 and "" for a started inference.
func (n *Net) StartInference(from, id, model, executor string) (uint32, string) {
	n.t.Helper()
	code, log := n.Tx(from, "inference", "start-inference", id, model, executor)
	if code == 0 {
		return 0, ""
	}
	return code, log
}

// Model is the model every executor of the localnet serves
// (scripts/localnet.sh's MODEL default, which the harness never changes).
const Model = "llama-7b"

// TransferAgentMinBond is the chain's transfer_agent_min_bond as a coin
// ("1000000stake"), what registering an agent takes at least.
func (n *Net) TransferAgentMinBond() string {
	n.t.Helper()
	var res struct {
		Params struct {
			MinBond struct {
				Denom  string `json:"denom"`
				Amount string `json:"amount"`
			} `json:"transfer_agent_min_bond"`
		} `json:"params"`
	}
	if err := n.Query(&res, "inference", "params"); err != nil {
		n.t.Fatal(err)
	}
	return res.Params.MinBond.Amount + res.Params.MinBond.Denom
}
