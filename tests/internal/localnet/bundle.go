package localnet

import (
	"fmt"
	"slices"
	"strings"

	"github.com/inferenced/inferenced/abci/proposals"
	"github.com/inferenced/inferenced/abci/ve"
	"github.com/inferenced/inferenced/x/inference/verdict"
)

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
	if err := n.GetJSON(n.REST(0)+"/inferenced/inference/v1/epoch/group", &res); err != nil {
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
	addr, err := n.validatorAddr(i)
	if err != nil {
		return err.Error()
	}
	var b bundleJSON
	if err := n.Query(&b, "health-bundle", fmt.Sprint(h)); err != nil {
		return err.Error()
	}
	index := n.memberIndex(executor)
	for _, v := range b.Votes {
		if !strings.EqualFold(v.Validator, addr) {
			continue
		}
		if index >= 0 && index < len(v.Verdicts) {
			return v.Verdicts[index]
		}
		return v.Status
	}
	return "not in the commit"
}

// HasBundle reports whether block h carries a health bundle, by the chain's
// own rule (proposals.Find); a bundle that does not decode fails the test.
func (n *Net) HasBundle(h int64) bool {
	n.t.Helper()
	_, found, err := proposals.Find(n.BlockTxs(h))
	if err != nil {
		n.t.Fatalf("block %d: undecodable health bundle: %v", h, err)
	}
	return found
}

// BundleLayout is the layout of block h's health bundle (HEALTH2 or
// HEALTH3) and whether it carries any votes; a block without a bundle, or
// with one that does not decode, fails the test.
func (n *Net) BundleLayout(h int64) (layout proposals.Layout, attested bool) {
	n.t.Helper()
	b, found, err := proposals.Find(n.BlockTxs(h))
	if !found || err != nil {
		n.t.Fatalf("block %d: no health bundle (found %v, %v)", h, found, err)
	}
	return b.Layout, !b.Empty()
}

// BundleBytes is the size of block h's health bundle transaction, 0 if the
// block has none.
func (n *Net) BundleBytes(h int64) int {
	n.t.Helper()
	for _, tx := range n.BlockTxs(h) {
		if proposals.IsBundle(tx) {
			return len(tx)
		}
	}
	return 0
}

// Samples is the attested sample of every executor in block h's health
// bundle, by address (`inferenced q health-bundle`): verdict.OK's or
// verdict.Miss's name; an executor without a sample is absent.
func (n *Net) Samples(h int64) (map[string]string, error) {
	var b bundleJSON
	if err := n.Query(&b, "health-bundle", fmt.Sprint(h)); err != nil {
		return nil, err
	}
	out := make(map[string]string, len(b.Samples))
	for _, s := range b.Samples {
		out[s.Executor] = s.Sample
	}
	return out, nil
}

// SilentVotes is, for block h's health bundle (node 0), how many attested
// votes carry verdicts that are all ok as sent, and how many attested
// votes there are. Sent relative to the chain's reference
// (x/inference/verdictref), a validator that sees what the chain attested
// sends all ok; sent as they are (before the v3 switch), only a validator
// that sees every executor serving does.
func (n *Net) SilentVotes(h int64) (silent, attested int) {
	n.t.Helper()
	b, found, err := proposals.Find(n.BlockTxs(h))
	if !found || err != nil {
		n.t.Fatalf("block %d: no health bundle (found %v, %v)", h, found, err)
	}
	votes, err := b.Votes()
	if err != nil {
		n.t.Fatalf("block %d: bundle votes: %v", h, err)
	}
	for _, vote := range votes {
		if len(vote.Signature) == 0 || len(vote.Extension) == 0 {
			continue
		}
		ext, err := ve.Decode(vote.Extension, b.Members)
		if err != nil {
			n.t.Fatalf("block %d: an extension does not decode: %v", h, err)
		}
		vs, err := verdict.Unpack(ext.Verdicts, b.Members)
		if err != nil {
			n.t.Fatalf("block %d: verdicts do not unpack: %v", h, err)
		}
		attested++
		if !slices.ContainsFunc(vs, func(v verdict.Verdict) bool { return v != verdict.OK }) {
			silent++
		}
	}
	return silent, attested
}
