package localnet

import (
	"fmt"
	"strings"
)

type HealthJSON struct {
	Address        string `json:"address"`
	State          string `json:"state"`
	Reason         string `json:"reason"`
	SinceHeight    string `json:"since_height"`
	ExcludedAt     string `json:"excluded_at"`
	EligibleHeight string `json:"eligible_height"`
	CooldownBlocks string `json:"cooldown_blocks"`
	TrafficSamples int    `json:"traffic_samples"`
	TrafficMisses  int    `json:"traffic_misses"`
	Exclusions     int    `json:"exclusions"`
	ProbeID        string `json:"probe_inference_id"`
}

// Health reads an executor's breaker state over REST (node 0).
func (n *Net) Health(addr string) (HealthJSON, error) { return n.HealthOn(0, addr) }

type ParticipantJSON struct {
	Address string `json:"address"`
	Status  string `json:"status"`
	Weight  string `json:"weight"`
	Stats   struct {
		InferenceCount string `json:"inference_count"`
		MissedRequests string `json:"missed_requests"`
	} `json:"current_epoch_stats"`
}

type InferenceJSON struct {
	ID               string `json:"inference_id"`
	Executor         string `json:"executor"`
	Status           string `json:"status"`
	ExpirationHeight string `json:"expiration_height"`
}

func (n *Net) Participant(addr string) ParticipantJSON {
	n.t.Helper()
	var res struct {
		Participant ParticipantJSON `json:"participant"`
	}
	if err := n.Query(&res, "inference", "participant", addr); err != nil {
		n.t.Fatal(err)
	}
	return res.Participant
}

func (n *Net) Inference(id string) InferenceJSON {
	n.t.Helper()
	var res struct {
		Inference InferenceJSON `json:"inference"`
	}
	if err := n.Query(&res, "inference", "inference", id); err != nil {
		n.t.Fatal(err)
	}
	return res.Inference
}

// TransitionEvent returns the attributes of the first breaker transition
// event for executor in the results of block height, or nil.
func (n *Net) TransitionEvent(height int64, executor string) map[string]string {
	n.t.Helper()
	if evs := n.TransitionEvents(height, executor); len(evs) > 0 {
		return evs[0]
	}
	return nil
}

// TransitionEvents returns the attributes of every breaker transition event
// for executor in the results of block height, in emission order.
func (n *Net) TransitionEvents(height int64, executor string) []map[string]string {
	n.t.Helper()
	var res struct {
		Result struct {
			Events []struct {
				Type       string `json:"type"`
				Attributes []struct {
					Key   string `json:"key"`
					Value string `json:"value"`
				} `json:"attributes"`
			} `json:"finalize_block_events"`
		} `json:"result"`
	}
	url := fmt.Sprintf("http://127.0.0.1:%d/block_results?height=%d", 26657+n.Offset, height)
	if err := n.GetJSON(url, &res); err != nil {
		n.t.Fatalf("block results: %v", err)
	}
	var out []map[string]string
	for _, ev := range res.Result.Events {
		if ev.Type != "inferenced.inference.v1.EventExecutorHealthChanged" {
			continue
		}
		attrs := map[string]string{}
		for _, a := range ev.Attributes {
			attrs[a.Key] = strings.Trim(a.Value, `"`)
		}
		if attrs["executor"] == executor {
			out = append(out, attrs)
		}
	}
	return out
}

// bundleJSON is the output of `inferenced q health-bundle`.
type bundleJSON struct {
	Empty bool `json:"empty"`
	Votes []struct {
		Validator string   `json:"validator"`
		Status    string   `json:"status"`
		Verdicts  []string `json:"verdicts"`
	} `json:"votes"`
	Samples []struct {
		Executor string `json:"executor"`
		Sample   string `json:"sample"`
	} `json:"samples"`
}

// memberIndex is executor's index in the current epoch group, or -1.
func (n *Net) memberIndex(executor string) int {
	var res struct {
		Group struct {
			Members []struct {
				Address string `json:"address"`
			} `json:"members"`
		} `json:"group"`
	}
	if err := n.GetJSON(fmt.Sprintf("http://127.0.0.1:%d/inferenced/inference/v1/epoch/group", 1317+n.Offset), &res); err != nil {
		return -1
	}
	for i, m := range res.Group.Members {
		if m.Address == executor {
			return i
		}
	}
	return -1
}

// BundleLine summarises the health bundle of block h for executor: the
// attested sample and each validator's verdict on it (or why it has none).
func (n *Net) BundleLine(h int64, executor string) string {
	var b bundleJSON
	if err := n.Query(&b, "health-bundle", fmt.Sprint(h)); err != nil {
		return err.Error()
	}
	if b.Empty {
		return "empty"
	}
	sample := "none"
	for _, s := range b.Samples {
		if s.Executor == executor {
			sample = s.Sample
		}
	}
	index := n.memberIndex(executor)
	var votes []string
	for _, v := range b.Votes {
		if index >= 0 && index < len(v.Verdicts) {
			votes = append(votes, v.Verdicts[index])
		} else {
			votes = append(votes, v.Status)
		}
	}
	return fmt.Sprintf("sample %s, votes %s", sample, strings.Join(votes, " "))
}

// VoteOf is validator i's vote about executor in the health bundle of
// block h: its verdict, or its status (abstained, pruned, absent).
func (n *Net) VoteOf(h int64, i int, executor string) string {
	var st struct {
		Result struct {
			Validator struct {
				Address string `json:"address"`
			} `json:"validator_info"`
		} `json:"result"`
	}
	if err := n.GetJSON(fmt.Sprintf("http://127.0.0.1:%d/status", 26657+100*i+n.Offset), &st); err != nil {
		return err.Error()
	}
	var b bundleJSON
	if err := n.Query(&b, "health-bundle", fmt.Sprint(h)); err != nil {
		return err.Error()
	}
	index := n.memberIndex(executor)
	for _, v := range b.Votes {
		if !strings.EqualFold(v.Validator, st.Result.Validator.Address) {
			continue
		}
		if index >= 0 && index < len(v.Verdicts) {
			return v.Verdicts[index]
		}
		return v.Status
	}
	return "not in the commit"
}

// HasBundle reports whether the first transaction of block h is a health
// bundle.
func (n *Net) HasBundle(h int64) bool {
	n.t.Helper()
	txs := n.BlockTxs(h)
	return len(txs) > 0 && strings.HasPrefix(string(txs[0]), "\xffHEALTH1")
}

// SawProbe reports whether executor was promoted to PROBE in a block of
// (from, to].
func SawProbe(n *Net, executor string, from, to int64) bool {
	for h := from + 1; h <= to; h++ {
		for _, e := range n.TransitionEvents(h, executor) {
			if e["to"] == "HEALTH_STATE_PROBE" {
				return true
			}
		}
	}
	return false
}
