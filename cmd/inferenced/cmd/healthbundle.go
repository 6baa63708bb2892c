package cmd

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"

	abci "github.com/cometbft/cometbft/abci/types"
	cmtproto "github.com/cometbft/cometbft/proto/tendermint/types"
	cmttypes "github.com/cometbft/cometbft/types"
	"github.com/spf13/cobra"

	"github.com/cosmos/cosmos-sdk/client"
	"github.com/cosmos/cosmos-sdk/client/flags"

	"github.com/inferenced/inferenced/abci/proposals"
	"github.com/inferenced/inferenced/abci/ve"
	"github.com/inferenced/inferenced/x/inference/types"
	"github.com/inferenced/inferenced/x/inference/verdict"
)

type bundleVote struct {
	Validator string   `json:"validator"`
	Power     int64    `json:"power"`
	Flag      string   `json:"flag"`
	Status    string   `json:"status"` // attested, abstained, pruned or absent
	Verdicts  []string `json:"verdicts,omitempty"`
}

type bundleSample struct {
	Index    int    `json:"index"`
	Executor string `json:"executor,omitempty"`
	Sample   string `json:"sample"`
}

type bundleView struct {
	Height  int64          `json:"height"`
	Layout  string         `json:"layout"` // HEALTH2 or HEALTH3, as the block carries it
	Epoch   uint64         `json:"epoch"`
	Empty   bool           `json:"empty"`
	Bytes   int            `json:"bytes"`   // the bundle transaction's size
	Members int            `json:"members"` // the group size it attests about
	Votes   []bundleVote   `json:"votes"`
	Samples []bundleSample `json:"samples"`
}

// healthBundleCmd decodes the health bundle of a block, in whichever layout
// it carries (HEALTH2 before the v3 upgrade's switch height, HEALTH3 from
// it): who voted what for which executor, and the resulting samples.
func healthBundleCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "health-bundle [height]",
		Short: "Decode the health bundle (tx[0]) of a block: each validator's verdicts and the attested samples",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			clientCtx, err := client.GetClientQueryContext(cmd)
			if err != nil {
				return err
			}
			height, err := strconv.ParseInt(args[0], 10, 64)
			if err != nil || height < 2 {
				return fmt.Errorf("height must be an integer >= 2, got %q", args[0])
			}
			node, err := clientCtx.GetNode()
			if err != nil {
				return err
			}
			block, err := node.Block(cmd.Context(), &height)
			if err != nil {
				return fmt.Errorf("block %d: %w", height, err)
			}
			b, found, err := proposals.Find(block.Block.Txs.ToSliceOfBytes())
			if !found {
				return fmt.Errorf("block %d has no health bundle this release reads (vote extensions off at that height, or a block from before the v2 upgrade, whose HEALTH1 bundle only the previous release decodes)", height)
			}
			if err != nil {
				return err
			}
			// The bundle is about the group in force before the block.
			var members []types.EpochMember
			res, err := types.NewQueryClient(clientCtx.WithHeight(height-1)).EpochGroup(cmd.Context(), &types.QueryEpochGroupRequest{})
			if err == nil && res.Group.EpochIndex == b.Epoch {
				members = res.Group.Members
			}
			var vals []*cmttypes.Validator
			if !b.Empty() {
				if block.Block.LastCommit == nil {
					return fmt.Errorf("block %d: no last commit", height)
				}
				if vals, err = validatorSet(cmd.Context(), node, height-1, len(block.Block.LastCommit.Signatures)); err != nil {
					return fmt.Errorf("block %d: %w", height, err)
				}
			}
			ref, err := verdictReference(cmd.Context(), node, b, height)
			if err != nil {
				return fmt.Errorf("block %d: %w", height, err)
			}
			view, err := describeBundle(block.Block, b, vals, members, ref)
			if err != nil {
				return fmt.Errorf("block %d: %w", height, err)
			}
			bz, err := json.Marshal(view)
			if err != nil {
				return err
			}
			return clientCtx.PrintRaw(bz)
		},
	}
	flags.AddQueryFlagsToCmd(cmd)
	return cmd
}

// maxReferenceWalk bounds how many blocks verdictReference reads back.
const maxReferenceWalk = 64

// verdictReference is the packing the extensions in bundle b of the block
// at height are relative to (x/inference/verdictref), read from the chain's
// blocks as the state keeps it: the samples of the latest block before
// height-1 whose bundle (HEALTH3, not empty) carries samples, when they
// are about b's epoch and group size; nil, none, for a HEALTH2 bundle or
// when there is no such block. It reads at most maxReferenceWalk blocks.
func verdictReference(ctx context.Context, node client.CometRPC, b proposals.Bundle, height int64) ([]byte, error) {
	if b.Layout != proposals.LayoutV3 || b.Empty() {
		return nil, nil
	}
	for h := height - 2; h >= 1; h-- {
		if h <= height-2-maxReferenceWalk {
			return nil, fmt.Errorf("no block with samples in the %d before %d: the verdicts' reference is unknown", maxReferenceWalk, height-1)
		}
		block, err := node.Block(ctx, &h)
		if err != nil {
			return nil, fmt.Errorf("block %d, for the verdict reference: %w", h, err)
		}
		prev, found, err := proposals.Find(block.Block.Txs.ToSliceOfBytes())
		if !found || err != nil || prev.Layout != proposals.LayoutV3 {
			return nil, nil
		}
		if prev.Empty() {
			continue
		}
		if prev.Epoch != b.Epoch || prev.Members != b.Members {
			return nil, nil
		}
		return prev.Samples, nil
	}
	return nil, nil
}

// describeBundle is the view of block's bundle b: its votes (vals is the
// set that signed the block's last commit, in its order; none for the
// empty bundle; their verdicts read against ref, verdictReference) and its
// samples, named by the group's members when known.
func describeBundle(block *cmttypes.Block, b proposals.Bundle, vals []*cmttypes.Validator, members []types.EpochMember, ref []byte) (bundleView, error) {
	view := bundleView{Height: block.Height, Layout: b.Layout.String(), Epoch: b.Epoch, Bytes: len(block.Txs[0]), Members: b.Members}
	var err error
	view.Votes, err = bundleVotes(block, b, vals, len(members), ref)
	if err != nil {
		return bundleView{}, err
	}
	view.Empty = len(view.Votes) == 0
	for i := 0; i < 4*len(b.Samples); i++ {
		s := verdict.At(b.Samples, i)
		if s == verdict.Unknown {
			continue
		}
		bs := bundleSample{Index: i, Sample: s.String()}
		if i < len(members) {
			bs.Executor = members[i].Address
		}
		view.Samples = append(view.Samples, bs)
	}
	return view, nil
}

// bundleVotes is each vote of the block's last commit with what the bundle
// carries for it: the bundle holds extensions and signatures in last-commit
// order, and the validators come from the set that signed it (a commit
// signature of an absent validator names no one).
func bundleVotes(block *cmttypes.Block, b proposals.Bundle, vals []*cmttypes.Validator, members int, ref []byte) ([]bundleVote, error) {
	if b.Empty() {
		return nil, nil
	}
	last := block.LastCommit
	if last == nil {
		return nil, fmt.Errorf("no last commit")
	}
	if len(vals) != len(last.Signatures) {
		return nil, fmt.Errorf("%d validators for %d commit signatures", len(vals), len(last.Signatures))
	}
	info := abci.CommitInfo{Round: last.Round, Votes: make([]abci.VoteInfo, len(last.Signatures))}
	for i, sig := range last.Signatures {
		info.Votes[i] = abci.VoteInfo{
			Validator:   abci.Validator{Address: vals[i].Address, Power: vals[i].VotingPower},
			BlockIdFlag: cmtproto.BlockIDFlag(sig.BlockIDFlag),
		}
	}
	ec, err := b.Commit(info)
	if err != nil {
		return nil, fmt.Errorf("bundle votes: %w", err)
	}
	out := make([]bundleVote, 0, len(ec.Votes))
	for _, v := range ec.Votes {
		bv := bundleVote{Validator: hex.EncodeToString(v.Validator.Address), Power: v.Validator.Power, Flag: v.BlockIdFlag.String()}
		switch {
		case len(v.ExtensionSignature) == 0 && v.BlockIdFlag == cmtproto.BlockIDFlagCommit:
			bv.Status = "pruned"
		case len(v.ExtensionSignature) == 0:
			bv.Status = "absent"
		case len(v.VoteExtension) == 0:
			bv.Status = "abstained"
		default:
			bv.Status = "attested"
			if ext, err := ve.Decode(v.VoteExtension, b.Members); err == nil {
				vs, err := verdict.Absolute(ext.Verdicts, ref, b.Members)
				for i := 0; err == nil && i < members && i < 4*len(vs); i++ {
					bv.Verdicts = append(bv.Verdicts, verdict.At(vs, i).String())
				}
			}
		}
		out = append(out, bv)
	}
	return out, nil
}

// validatorSet is the set at height in CometBFT's order, the order of that
// height's commit signatures; it must have want validators.
func validatorSet(ctx context.Context, node client.CometRPC, height int64, want int) ([]*cmttypes.Validator, error) {
	var out []*cmttypes.Validator
	perPage := 100
	for page := 1; len(out) < want; page++ {
		res, err := node.Validators(ctx, &height, &page, &perPage)
		if err != nil {
			return nil, fmt.Errorf("validators at %d: %w", height, err)
		}
		if len(res.Validators) == 0 {
			break
		}
		out = append(out, res.Validators...)
	}
	if len(out) != want {
		return nil, fmt.Errorf("validator set at %d has %d validators, its commit %d", height, len(out), want)
	}
	return out, nil
}
