package cmd

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"

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
			view := bundleView{Height: height, Epoch: b.Epoch, Empty: len(b.Commit.Votes) == 0}
			n := len(members)
			if n == 0 {
				n = 4 * len(b.Samples)
			}
			for _, v := range b.Commit.Votes {
				bv := bundleVote{Validator: hex.EncodeToString(v.Validator.Address), Power: v.Validator.Power, Flag: v.BlockIdFlag.String()}
				switch {
				case len(v.ExtensionSignature) == 0 && v.BlockIdFlag.String() == "BLOCK_ID_FLAG_COMMIT":
					bv.Status = "pruned"
				case len(v.ExtensionSignature) == 0:
					bv.Status = "absent"
				case len(v.VoteExtension) == 0:
					bv.Status = "abstained"
				default:
					bv.Status = "attested"
					if ext, err := ve.Decode(v.VoteExtension, n); err == nil {
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
