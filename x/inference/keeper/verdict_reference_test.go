package keeper_test

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/inferenced/inferenced/x/inference/testutil/testkit"
)

// TestVerdictReferenceIsTheSameBeforeAndAfterTheBlock: over 80 blocks of
// random attestations (some blocks none, the same samples again, epoch
// boundaries among them), the reference of the extensions of vote height
// h read from the state after h-1 (ExtendVote) is the one read from the
// state after h (the next block's proposal); from bundle_v3_height on it
// is the samples of the latest block before h that carried any, before
// it (a chain that has not switched) there is none, and nothing is
// written.
func TestVerdictReferenceIsTheSameBeforeAndAfterTheBlock(t *testing.T) {
	for _, tc := range []struct {
		name     string
		switchAt int64
	}{{"switched at genesis", 1}, {"switch at 40", 40}, {"not switched", 1_000_000}} {
		t.Run(tc.name, func(t *testing.T) {
			f := newBreakerFixture(t, func(c *config) { c.genesis.BundleV3Height = tc.switchAt })
			rng := rand.New(rand.NewPCG(25, uint64(tc.switchAt)))
			var last []byte // the packed samples of the latest block (from the switch) that carried any
			referenced := 0
			for h := f.height + 1; h <= 80; h++ {
				epoch, n, err := f.k.VoteGroup(f.ctx, h)
				require.NoError(t, err)
				before, err := f.k.VerdictReference(f.ctx, h, epoch, n)
				require.NoError(t, err)
				if rng.IntN(4) > 0 {
					f.attested = nil
					for i := byte(1); i <= 4; i++ {
						if x := rng.IntN(3); x > 0 {
							f.attested = append(f.attested, testkit.Attested{Executor: addr(i), Miss: x == 2})
						}
					}
				}
				attested := len(f.attested) > 0
				f.begin(h)
				epochAfter, nAfter, err := f.k.VoteGroup(f.ctx, h)
				require.NoError(t, err)
				require.Equal(t, [2]any{epoch, n}, [2]any{epochAfter, nAfter}, "VoteGroup at %d", h)
				after, err := f.k.VerdictReference(f.ctx, h, epoch, n)
				require.NoError(t, err)
				require.Equal(t, before, after, "vote height %d: the reference changed with block %d", h, h)
				if before != nil {
					referenced++
					require.Equal(t, last, before, "vote height %d reads the latest samples before it", h)
				}
				if attested && h >= tc.switchAt {
					last = f.samples
				}
				f.end()
			}
			switch tc.switchAt {
			case 1_000_000:
				require.Zero(t, referenced, "a chain that has not switched has no reference")
			default:
				require.Greater(t, referenced, 20)
			}
		})
	}
}
