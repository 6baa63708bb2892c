package cmd

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"

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
	Epoch   uint64         `json:"epoch"`
	Empty   bool           `json:"empty"`
	Bytes   int            `json:"bytes"`   // the bundle transaction's size
	Members int            `json:"members"` // the group size it attests about
	Votes   []bundleVote   `json:"votes"`
	Samples []bundleSample `json:"samples"`
}

// healthBundleCmd decodes the health bundle of a block: who voted what for
// which executor, and the resulting samples.
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
				return fmt.Errorf("block %d has no health bundle (vote extensions off at that height?)", height)
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
			view := bundleView{Height: height, Epoch: b.Epoch, Bytes: len(block.Block.Txs[0]), Members: b.Members}
			pairs, err := b.Votes()
			if err != nil {
				return fmt.Errorf("block %d: bundle votes: %w", height, err)
			}
			view.Empty = len(pairs) == 0
			last := block.Block.LastCommit
			if len(pairs) > 0 && (last == nil || len(last.Signatures) != len(pairs)) {
				return fmt.Errorf("block %d: bundle carries %d votes, its last commit has %d", height, len(pairs), len(last.Signatures))
			}
			powers := validatorPowers(cmd.Context(), node, height-1)
			for i, p := range pairs {
				sig := last.Signatures[i]
				addr := sig.ValidatorAddress.String()
				bv := bundleVote{Validator: addr, Power: powers[addr], Flag: cmtproto.BlockIDFlag(sig.BlockIDFlag).String()}
				switch {
				case len(p.Signature) == 0 && sig.BlockIDFlag == cmttypes.BlockIDFlagCommit:
					bv.Status = "pruned"
				case len(p.Signature) == 0:
					bv.Status = "absent"
				case len(p.Extension) == 0:
					bv.Status = "abstained"
				default:
					bv.Status = "attested"
					if ext, err := ve.Decode(p.Extension, b.Members); err == nil {
						for i := 0; i < len(members) && i < 4*len(ext.Verdicts); i++ {
							bv.Verdicts = append(bv.Verdicts, verdict.At(ext.Verdicts, i).String())
						}
					}
				}
				view.Votes = append(view.Votes, bv)
			}
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

// validatorPowers is the voting power of each validator (by hex address) in
// the set at height, empty if the node cannot say (power is then shown 0).
func validatorPowers(ctx context.Context, node client.CometRPC, height int64) map[string]int64 {
	out := map[string]int64{}
	perPage := 100
	for page := 1; page <= 10; page++ {
		res, err := node.Validators(ctx, &height, &page, &perPage)
		if err != nil {
			return out
		}
		for _, v := range res.Validators {
			out[v.Address.String()] = v.VotingPower
		}
		if len(out) >= res.Total {
			return out
		}
	}
	return out
}
