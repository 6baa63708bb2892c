package localnet

import (
	"fmt"
	"strings"

	"github.com/inferenced/inferenced/abci/proposals"
	"github.com/inferenced/inferenced/abci/ve"
	"github.com/inferenced/inferenced/x/inference/service"
)

// ServiceView is what the health bundle of one block says about service:
// the attested rate of each member (the power-weighted median of the
// validators' canary reports) and each vote's own reports. The chain's
// decoders read it (proposals.Find, ve.Decode, service.Decode), so a
// bundle that does not decode fails the test.
type ServiceView struct {
	Height  int64
	Members []string         // the group the bundle attests about, in index order
	Rates   []service.Report // attested, one per member; nil: the bundle carries none
	// Votes holds each commit vote's reports by validator address (upper
	// hex, as /status shows it); Status its status: "attested",
	// "abstained", or "no extension" (absent, or pruned as
	// invalid).
	Votes  map[string][]service.Report
	Status map[string]string
}

// Service reads block h's health bundle (node 0); a block without one is
// an error.
func (n *Net) Service(h int64) (ServiceView, error) {
	b, found, err := proposals.Find(n.BlockTxs(h))
	if err != nil || !found {
		return ServiceView{}, fmt.Errorf("block %d: no health bundle (%v)", h, err)
	}
	v := ServiceView{Height: h, Votes: map[string][]service.Report{}, Status: map[string]string{}}
	var group struct {
		Group struct {
			Members []struct {
				Address string `json:"address"`
			} `json:"members"`
		} `json:"group"`
	}
	if err := getJSONAt(n.REST(0)+"/inferenced/inference/v1/epoch/group", h-1, &group); err != nil {
		return ServiceView{}, err
	}
	for _, m := range group.Group.Members {
		v.Members = append(v.Members, m.Address)
	}
	if len(b.Service) > 0 {
		if v.Rates, err = service.Decode(b.Service, b.Members); err != nil {
			n.t.Fatalf("block %d: attested service rates do not decode: %v", h, err)
		}
	}
	votes, err := b.Votes()
	if err != nil {
		n.t.Fatalf("block %d: bundle votes: %v", h, err)
	}
	vals, err := n.validatorOrder(h - 1)
	if err != nil {
		return ServiceView{}, err
	}
	if len(vals) != len(votes) {
		return ServiceView{}, fmt.Errorf("block %d: %d votes for %d validators", h, len(votes), len(vals))
	}
	for k, vote := range votes {
		addr := vals[k]
		switch {
		case len(vote.Signature) == 0:
			v.Status[addr] = "no extension"
		case len(vote.Extension) == 0:
			v.Status[addr] = "abstained"
		default:
			v.Status[addr] = "attested"
			ext, err := ve.Decode(vote.Extension, b.Members)
			if err != nil {
				n.t.Fatalf("block %d: validator %s's extension does not decode: %v", h, addr, err)
			}
			if v.Votes[addr], err = service.Decode(ext.Service, b.Members); err != nil {
				n.t.Fatalf("block %d: validator %s's service reports do not decode: %v", h, addr, err)
			}
		}
	}
	return v, nil
}

// Rate is the attested service rate of executor ("unknown" when the
// bundle has none for it, "none" when it carries no rates at all).
func (v ServiceView) Rate(executor string) string {
	if v.Rates == nil {
		return "none"
	}
	i := v.index(executor)
	if i < 0 || i >= len(v.Rates) {
		return "not a member"
	}
	return v.Rates[i].String()
}

// VoteOn is validator's report on executor ("100%", "unknown"), or the
// vote's status when it carries no extension.
func (v ServiceView) VoteOn(validator, executor string) string {
	st, ok := v.Status[strings.ToUpper(validator)]
	switch {
	case !ok:
		return "not in the commit"
	case st != "attested":
		return st
	}
	r := v.Votes[strings.ToUpper(validator)]
	i := v.index(executor)
	if i < 0 || i >= len(r) {
		return "not a member"
	}
	return r[i].String()
}

func (v ServiceView) index(executor string) int {
	for i, m := range v.Members {
		if m == executor {
			return i
		}
	}
	return -1
}

// ValidatorAddr is validator i's consensus address (upper hex, /status).
func (n *Net) ValidatorAddr(i int) string {
	n.t.Helper()
	addr, err := n.validatorAddr(i)
	if err != nil {
		n.t.Fatalf("validator %d status: %v", i, err)
	}
	return addr
}

// validatorAddr is ValidatorAddr, or the error reading /status.
func (n *Net) validatorAddr(i int) (string, error) {
	var st struct {
		Result struct {
			Validator struct {
				Address string `json:"address"`
			} `json:"validator_info"`
		} `json:"result"`
	}
	if err := n.GetJSON(n.RPC(i)+"/status", &st); err != nil {
		return "", err
	}
	return strings.ToUpper(st.Result.Validator.Address), nil
}

// validatorOrder is the validator set at height in CometBFT's order, the
// order of the next block's commit votes.
func (n *Net) validatorOrder(height int64) ([]string, error) {
	var res struct {
		Result struct {
			Validators []struct {
				Address string `json:"address"`
			} `json:"validators"`
		} `json:"result"`
	}
	if err := n.GetJSON(fmt.Sprintf("%s/validators?height=%d&per_page=100", n.RPC(0), height), &res); err != nil {
		return nil, err
	}
	out := make([]string, len(res.Result.Validators))
	for k, val := range res.Result.Validators {
		out[k] = strings.ToUpper(val.Address)
	}
	return out, nil
}

// GroupMember is the address of the current epoch group's member i (the
// index vote extensions use); the test fails if there is none.
func (n *Net) GroupMember(i int) string {
	n.t.Helper()
	var res struct {
		Group struct {
			Members []struct {
				Address string `json:"address"`
			} `json:"members"`
		} `json:"group"`
	}
	if err := n.GetJSON(n.REST(0)+"/inferenced/inference/v1/epoch/group", &res); err != nil {
		n.t.Fatalf("epoch group: %v", err)
	}
	if i < 0 || i >= len(res.Group.Members) {
		n.t.Fatalf("the group has no member %d (%d members)", i, len(res.Group.Members))
	}
	return res.Group.Members[i].Address
}
